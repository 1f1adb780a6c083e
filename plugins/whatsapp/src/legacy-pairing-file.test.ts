import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '@colloquy/core';
import { createPairingAccess, PAIRING_CODE_TTL_MS } from '@colloquy/core/internal';
import { MemoryStore } from '@colloquy/core/store';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { importLegacyPairingFile, LEGACY_PAIRING_FILE } from './legacy-pairing-file.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'wa-legacy-pairing-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

describe('the old pairing file', () => {
  it('is moved into the store once, for the account, then renamed', async () => {
    const now = Date.now();
    await writeFile(
      join(dir, LEGACY_PAIRING_FILE),
      JSON.stringify({
        version: 1,
        approved: [{ peerId: '15551230000', name: 'Carol', approvedAt: now - 1000 }],
        pending: [
          { code: 'K7QX2M9P', peerId: '15559990000', jid: '15559990000@s.whatsapp.net', createdAt: now },
          { code: 'OLDCODE2', peerId: '15558880000', jid: 'x', createdAt: now - PAIRING_CODE_TTL_MS - 1 },
        ],
      }),
    );
    const store = new MemoryStore();
    const access = createPairingAccess(store, 'whatsapp');
    expect(await importLegacyPairingFile(dir, 'work', access, silentLogger, undefined, now)).toBe(2);
    expect(await access.isApproved('work', '15551230000')).toBe(true);
    expect(await access.isApproved('default', '15551230000')).toBe(false);
    expect(await access.approve('k7qx2m9p')).toMatchObject({ peerId: '15559990000', accountId: 'work' });
    expect(await readdir(dir)).toEqual([`${LEGACY_PAIRING_FILE}.imported`]);
  });

  it('leaves a damaged file in place and imports nothing', async () => {
    await writeFile(join(dir, LEGACY_PAIRING_FILE), '{ nope');
    const access = createPairingAccess(new MemoryStore(), 'whatsapp');
    expect(await importLegacyPairingFile(dir, 'default', access, silentLogger)).toBe(0);
    expect(await readdir(dir)).toEqual([LEGACY_PAIRING_FILE]);
  });
});
