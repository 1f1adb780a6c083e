import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type PairingAccess, silentLogger } from '@colloquy/core';
import { approvePairing } from '@colloquy/core/gateway';
import { createPairingAccess } from '@colloquy/core/internal';
import { MemoryStore } from '@colloquy/core/store';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { importLegacyPairingFile, LEGACY_PAIRING_FILE } from '../pairing/legacy-pairing-file.js';
import { decideDmAccess, PAIRING_REMINDER_MS } from './access-policy.js';

let store: MemoryStore;
let access: PairingAccess;
beforeEach(() => {
  store = new MemoryStore();
  access = createPairingAccess(store, 'telegram');
});

const pairing = { dmPolicy: 'pairing' as const, allowFrom: [] };
const alice = { id: '42', username: 'alice', name: 'Alice' };

describe('dm policy: pairing', () => {
  it('issues a code once, then approves the user with it', async () => {
    const now = Date.now();
    const first = await decideDmAccess(pairing, access, 'main', alice, now);
    expect(first).toMatchObject({ action: 'pair', notify: true });
    const again = await decideDmAccess(pairing, access, 'main', alice, now + 1000);
    expect(again).toEqual({ action: 'pair', code: (first as { code: string }).code, notify: false });
    const code = (first as { code: string }).code;
    expect((await access.list(now)).pending).toMatchObject([
      { code, peerId: '42', accountId: 'main', displayName: 'Alice', meta: { username: 'alice' } },
    ]);
    await approvePairing(store, 'telegram', code.toLowerCase());
    expect(await decideDmAccess(pairing, access, 'main', alice)).toEqual({ action: 'accept' });
    expect(await decideDmAccess(pairing, access, 'other-account', alice)).toMatchObject({ action: 'pair' });
  });

  it('reminds a waiting user of their code at most every ten minutes', async () => {
    const now = Date.now();
    const first = await decideDmAccess(pairing, access, 'main', alice, now);
    expect(await decideDmAccess(pairing, access, 'main', alice, now + 60_000)).toMatchObject({
      notify: false,
    });
    const reminded = await decideDmAccess(pairing, access, 'main', alice, now + PAIRING_REMINDER_MS + 1);
    expect(reminded).toEqual({ ...first, notify: true });
    expect(await decideDmAccess(pairing, access, 'main', alice, now + PAIRING_REMINDER_MS + 2)).toMatchObject(
      {
        notify: false,
      },
    );
  });

  it('gives twenty users arriving at once twenty distinct codes', async () => {
    const decisions = await Promise.all(
      Array.from({ length: 20 }, (_, i) => decideDmAccess(pairing, access, 'main', { id: String(i) })),
    );
    const codes = decisions.map((d) => (d as { code: string }).code);
    expect(new Set(codes).size).toBe(20);
    expect((await access.list()).pending).toHaveLength(20);
  });

  it('revoking an approved user makes their next DM start pairing again', async () => {
    const decision = await decideDmAccess(pairing, access, 'main', alice);
    await access.approve((decision as { code: string }).code);
    expect(await access.revoke('main', '42')).toBe(true);
    expect(await decideDmAccess(pairing, access, 'main', alice)).toMatchObject({ action: 'pair' });
  });
});

describe('dm policy: open and allowlist', () => {
  it('open accepts anyone; allowlist accepts only allowFrom by id or username', async () => {
    expect(await decideDmAccess({ dmPolicy: 'open', allowFrom: [] }, access, 'main', alice)).toEqual({
      action: 'accept',
    });
    const allowlist = { dmPolicy: 'allowlist' as const, allowFrom: ['7', '@Alice'] };
    expect(await decideDmAccess(allowlist, access, 'main', alice)).toEqual({ action: 'accept' });
    expect(await decideDmAccess(allowlist, access, 'main', { id: '7' })).toEqual({ action: 'accept' });
    expect(await decideDmAccess(allowlist, access, 'main', { id: '8', username: 'mallory' })).toMatchObject({
      action: 'drop',
    });
  });

  it('pairing lets allowFrom through without a code', async () => {
    expect(await decideDmAccess({ dmPolicy: 'pairing', allowFrom: ['42'] }, access, 'main', alice)).toEqual({
      action: 'accept',
    });
    expect(await store.listPairings({ channel: 'telegram' })).toEqual([]);
  });
});

describe('the old pairing file', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'colloquy-tg-legacy-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('is moved into the store once: approvals and unexpired codes, then renamed', async () => {
    const now = Date.now();
    const legacy = {
      version: 1,
      approved: [{ accountId: 'main', userId: '7', username: 'bob', approvedAt: now - 5000 }],
      pending: [
        {
          code: 'ABCDEFGH',
          accountId: 'main',
          userId: '8',
          createdAt: now,
          expiresAt: now + 60_000,
          notifiedAt: now,
        },
        { code: 'EXPIRED2', accountId: 'main', userId: '9', createdAt: 0, expiresAt: 1, notifiedAt: 0 },
      ],
    };
    await writeFile(join(dir, LEGACY_PAIRING_FILE), JSON.stringify(legacy));
    expect(await importLegacyPairingFile(dir, access, silentLogger, now)).toBe(2);
    expect(await access.isApproved('main', '7')).toBe(true);
    expect((await access.approve('abcd efgh')).peerId).toBe('8');
    expect(await readdir(dir)).toEqual([`${LEGACY_PAIRING_FILE}.imported`]);
    expect(await importLegacyPairingFile(dir, access, silentLogger, now)).toBe(0);
  });

  it('leaves a damaged file in place and imports nothing', async () => {
    await writeFile(join(dir, LEGACY_PAIRING_FILE), '{ not json');
    expect(await importLegacyPairingFile(dir, access, silentLogger)).toBe(0);
    expect(await readdir(dir)).toEqual([LEGACY_PAIRING_FILE]);
  });
});
