import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '@colloquy/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PeerMap } from './peer-map.js';

let dir: string;
const warnings: string[] = [];
const log: Logger = {
  debug: () => {},
  info: () => {},
  warn: (_obj, msg) => void warnings.push(msg ?? ''),
  error: () => {},
  child: () => log,
};

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'wa-peers-'));
  warnings.length = 0;
});
afterEach(() => rm(dir, { recursive: true, force: true }));

describe('PeerMap', () => {
  it('gives a person one peer id by phone number, and the LID JID until the number is known', async () => {
    const peers = await PeerMap.load(dir, log);
    expect(peers.peerIdFor('777@lid')).toBe('777@lid');
    expect(peers.learn('777:2@lid', '15551230000:5@s.whatsapp.net')).toBe(true);
    expect(peers.learn('777@lid', '15551230000@s.whatsapp.net')).toBe(false);
    expect(peers.peerIdFor('777@lid')).toBe('15551230000');
    expect(peers.peerIdFor('15551230000@s.whatsapp.net')).toBe('15551230000');
    expect(peers.peerIdFor('120363041234567890@g.us')).toBeUndefined();
    expect(peers.aliasesOf('15551230000@s.whatsapp.net').sort()).toEqual([
      '15551230000@s.whatsapp.net',
      '777@lid',
    ]);
    await peers.flush();
  });

  it('refuses pairs that are not a LID and a phone JID', async () => {
    const peers = await PeerMap.load(dir, log);
    expect(peers.learn('15551230000@s.whatsapp.net', '777@lid')).toBe(false);
    expect(peers.learn('777@lid', '120363041234567890@g.us')).toBe(false);
    expect(peers.learn(undefined, '15551230000@s.whatsapp.net')).toBe(false);
  });

  it('persists what it learned and reloads it', async () => {
    const peers = await PeerMap.load(dir, log);
    peers.learnFromContacts([{ id: '15550009999@s.whatsapp.net', lid: '70000003@lid' }]);
    peers.learnFromKey({ remoteJid: '70000004@lid', remoteJidAlt: '15550004444@s.whatsapp.net' } as never);
    await peers.flush();
    expect(JSON.parse(await readFile(join(dir, 'lid-map.json'), 'utf8'))).toEqual({
      version: 1,
      lidToPhone: { '70000003': '15550009999', '70000004': '15550004444' },
    });
    const again = await PeerMap.load(dir, log);
    expect(again.peerIdFor('70000004@lid')).toBe('15550004444');
  });

  it('starts empty with a warning when its file is corrupt', async () => {
    await writeFile(join(dir, 'lid-map.json'), '{ nope');
    const peers = await PeerMap.load(dir, log);
    expect(peers.peerIdFor('777@lid')).toBe('777@lid');
    expect(warnings[0]).toContain('corrupt');
  });

  it('sends to the JID a peer last wrote from, else to the phone JID', async () => {
    const peers = await PeerMap.load(dir, log);
    expect(peers.jidFor('15551230000')).toBe('15551230000@s.whatsapp.net');
    expect(peers.jidFor('+15551230000')).toBe('15551230000@s.whatsapp.net');
    expect(peers.jidFor('120363041234567890@g.us')).toBe('120363041234567890@g.us');
    peers.rememberJid('15551230000', '777@lid');
    expect(peers.jidFor('15551230000')).toBe('777@lid');
  });
});
