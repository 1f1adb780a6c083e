import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isColloquyError } from '@colloquy/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  approveWhatsAppPairing,
  listWhatsAppPairings,
  PAIRING_CODE_TTL_MS,
  PairingStore,
} from './pairing.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'wa-pairing-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

describe('pairing', () => {
  it('gives one peer one code until it is approved, and approval is seen by a running store', async () => {
    const store = new PairingStore(dir);
    const first = await store.request({
      peerId: '15551230000',
      jid: '15551230000@s.whatsapp.net',
      name: 'Carol',
    });
    const second = await store.request({ peerId: '15551230000', jid: '15551230000@s.whatsapp.net' });
    expect(first.created).toBe(true);
    expect(second).toEqual({ code: first.code, created: false });
    expect(first.code).toMatch(/^[A-HJ-NP-Z2-9]{8}$/);
    expect(await store.isApproved('15551230000')).toBe(false);

    await approveWhatsAppPairing(dir, first.code);
    expect(await store.isApproved('15551230000')).toBe(true);
    expect(await listWhatsAppPairings(dir)).toMatchObject({
      pending: [],
      approved: [{ peerId: '15551230000', name: 'Carol' }],
    });
  });

  it('refuses an expired code', async () => {
    const store = new PairingStore(dir);
    const { code } = await store.request({ peerId: '15551230000', jid: '15551230000@s.whatsapp.net' });
    const file = join(dir, 'pairing.json');
    const data = JSON.parse(await readFile(file, 'utf8'));
    data.pending[0].createdAt -= PAIRING_CODE_TTL_MS + 1;
    await writeFile(file, JSON.stringify(data));
    const error = await approveWhatsAppPairing(dir, code).catch((e: unknown) => e);
    expect(isColloquyError(error) && error.code).toBe('INVALID_ARGUMENT');
    expect((await listWhatsAppPairings(dir)).pending).toEqual([]);
  });

  it('reports a corrupt pairing file with its path', async () => {
    await writeFile(join(dir, 'pairing.json'), '{');
    const error = await listWhatsAppPairings(dir).catch((e: unknown) => e);
    expect(isColloquyError(error) && error.code).toBe('STORE_CORRUPT');
    expect((error as Error).message).toContain(join(dir, 'pairing.json'));
  });
});
