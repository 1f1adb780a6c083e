import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '@colloquy/core';
import { afterEach, describe, expect, it } from 'vitest';
import { SentMessageStore } from './sent-message-store.js';

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('SentMessageStore', () => {
  it('keeps the newest messages across a reload, bounded, with binary fields intact', async () => {
    dir = await mkdtemp(join(tmpdir(), 'wa-sent-'));
    const store = await SentMessageStore.load(dir, silentLogger, undefined, 2);
    store.record('A', { conversation: 'a' });
    store.record('B', { imageMessage: { mediaKey: new Uint8Array([1, 2, 3]) } });
    store.record('C', { conversation: 'c' });
    await store.flush();
    const reloaded = await SentMessageStore.load(dir, silentLogger, undefined, 2);
    expect(reloaded.get('A')).toBeUndefined();
    expect(Buffer.from(reloaded.get('B')?.imageMessage?.mediaKey ?? [])).toEqual(Buffer.from([1, 2, 3]));
    expect(reloaded.get('C')).toEqual({ conversation: 'c' });
  });

  it('starts empty on a corrupt file', async () => {
    dir = await mkdtemp(join(tmpdir(), 'wa-sent-'));
    await writeFile(join(dir, 'sent-messages.json'), '{not json');
    const store = await SentMessageStore.load(dir, silentLogger);
    expect(store.get('A')).toBeUndefined();
  });
});
