import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { decideDmAccess } from '../inbound/access-policy.js';
import {
  approveTelegramPairing,
  createPairingCode,
  listTelegramPairings,
  PAIRING_FILE,
  revokeTelegramPairing,
  updatePairingState,
} from './pairing-store.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'colloquy-tg-pairing-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const pairing = { dmPolicy: 'pairing' as const, allowFrom: [] };
const alice = { id: '42', username: 'alice', name: 'Alice' };

describe('pairing store', () => {
  it('makes 8-character codes without look-alike characters', () => {
    for (let i = 0; i < 50; i++) expect(createPairingCode()).toMatch(/^[A-HJ-NP-Z2-9]{8}$/);
  });

  it('issues a code once, then approves the user with it', async () => {
    const first = await decideDmAccess(pairing, dir, 'main', alice, 1_000);
    expect(first).toMatchObject({ action: 'pair', notify: true });
    const again = await decideDmAccess(pairing, dir, 'main', alice, 2_000);
    expect(again).toEqual({ action: 'pair', code: (first as { code: string }).code, notify: false });
    const listed = await listTelegramPairings(dir);
    expect(listed.pending).toHaveLength(0); // the code expired: the clock above is 1970
    const now = Date.now();
    const fresh = await decideDmAccess(pairing, dir, 'main', alice, now);
    const code = (fresh as { code: string }).code;
    expect((await listTelegramPairings(dir)).pending).toMatchObject([
      { code, userId: '42', username: 'alice' },
    ]);
    const approved = await approveTelegramPairing(dir, code.toLowerCase());
    expect(approved).toMatchObject({ accountId: 'main', userId: '42', username: 'alice' });
    expect(await decideDmAccess(pairing, dir, 'main', alice)).toEqual({ action: 'accept' });
    expect(await decideDmAccess(pairing, dir, 'other-account', alice)).toMatchObject({ action: 'pair' });
    expect((await listTelegramPairings(dir)).approved).toHaveLength(1);
  });

  it('reminds a waiting user of their code at most every ten minutes', async () => {
    const now = Date.now();
    const first = await decideDmAccess(pairing, dir, 'main', alice, now);
    expect(await decideDmAccess(pairing, dir, 'main', alice, now + 60_000)).toMatchObject({ notify: false });
    expect(await decideDmAccess(pairing, dir, 'main', alice, now + 11 * 60_000)).toEqual({
      ...first,
      notify: true,
    });
  });

  it('refuses unknown codes with a message that says what to do', async () => {
    await expect(approveTelegramPairing(dir, 'NOPE2345')).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringContaining('message the bot again'),
    });
  });

  it('revokes an approved user', async () => {
    const decision = await decideDmAccess(pairing, dir, 'main', alice);
    await approveTelegramPairing(dir, (decision as { code: string }).code);
    expect(await revokeTelegramPairing(dir, 'main', '42')).toBe(true);
    expect(await decideDmAccess(pairing, dir, 'main', alice)).toMatchObject({ action: 'pair' });
  });

  it('writes atomically and leaves no temp or lock files', async () => {
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => decideDmAccess(pairing, dir, 'main', { id: String(i) })),
    );
    expect((await listTelegramPairings(dir)).pending).toHaveLength(20);
    expect(await readdir(dir)).toEqual([PAIRING_FILE]);
    expect(JSON.parse(await readFile(join(dir, PAIRING_FILE), 'utf8'))).toMatchObject({ version: 1 });
  });

  it('reports a damaged file as STORE_CORRUPT', async () => {
    await writeFile(join(dir, PAIRING_FILE), '{ not json');
    await expect(listTelegramPairings(dir)).rejects.toMatchObject({ code: 'STORE_CORRUPT' });
    await expect(updatePairingState(dir, () => undefined)).rejects.toMatchObject({ code: 'STORE_CORRUPT' });
  });
});

describe('dm policy', () => {
  it('open accepts anyone; allowlist accepts only allowFrom by id or username', async () => {
    expect(await decideDmAccess({ dmPolicy: 'open', allowFrom: [] }, dir, 'main', alice)).toEqual({
      action: 'accept',
    });
    const allowlist = { dmPolicy: 'allowlist' as const, allowFrom: ['7', '@Alice'] };
    expect(await decideDmAccess(allowlist, dir, 'main', alice)).toEqual({ action: 'accept' });
    expect(await decideDmAccess(allowlist, dir, 'main', { id: '7' })).toEqual({ action: 'accept' });
    expect(await decideDmAccess(allowlist, dir, 'main', { id: '8', username: 'mallory' })).toMatchObject({
      action: 'drop',
    });
  });

  it('pairing lets allowFrom through without a code', async () => {
    expect(await decideDmAccess({ dmPolicy: 'pairing', allowFrom: ['42'] }, dir, 'main', alice)).toEqual({
      action: 'accept',
    });
    expect(await readdir(dir)).toEqual([]);
  });
});
