import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../store/memory-store.js';
import {
  approvePairing,
  createPairingAccess,
  listPairings,
  MAX_PENDING_PAIRINGS,
  PAIRING_CODE_TTL_MS,
  requestPairing,
} from './pairing.js';

const T0 = 1_700_000_000_000;
const peer = (peerId: string) => ({ accountId: 'default', peerId, displayName: `Peer ${peerId}` });

describe('pairing', () => {
  it('issues one code per peer and reuses it until it expires', async () => {
    const store = new MemoryStore();
    const first = await requestPairing(store, 'telegram', peer('u1'), T0);
    const again = await requestPairing(store, 'telegram', peer('u1'), T0 + 1000);
    expect(first.created).toBe(true);
    expect(again).toEqual({ record: first.record, created: false });
    expect(first.record.code).toMatch(/^[A-HJ-NP-Z2-9]{8}$/);
    const later = await requestPairing(store, 'telegram', peer('u1'), T0 + PAIRING_CODE_TTL_MS + 1);
    expect(later.created).toBe(true);
    expect(later.record.code).not.toBe(first.record.code);
  });

  it('approves by code, ignoring spaces and case, and the approval replaces the code', async () => {
    const store = new MemoryStore();
    const { record } = await requestPairing(store, 'telegram', peer('u1'), T0);
    const typed = `${record.code!.slice(0, 4).toLowerCase()} ${record.code!.slice(4)}`;
    const approved = await approvePairing(store, 'telegram', typed, T0 + 5);
    expect(approved).toMatchObject({ peerId: 'u1', status: 'approved', approvedAt: T0 + 5 });
    expect(approved.code).toBeUndefined();
    const access = createPairingAccess(store, 'telegram');
    expect(await access.isApproved('default', 'u1')).toBe(true);
    expect(await access.isApproved('other', 'u1')).toBe(false);
    await expect(approvePairing(store, 'telegram', record.code!, T0 + 6)).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
  });

  it('refuses an expired code and a code of another channel', async () => {
    const store = new MemoryStore();
    const { record } = await requestPairing(store, 'whatsapp', peer('u1'), T0);
    await expect(approvePairing(store, 'telegram', record.code!, T0)).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
    await expect(approvePairing(store, 'whatsapp', record.code!, T0 + PAIRING_CODE_TTL_MS)).rejects.toThrow(
      /expire/,
    );
  });

  it('keeps at most MAX_PENDING_PAIRINGS codes, dropping the oldest, and hides expired ones', async () => {
    const store = new MemoryStore();
    for (let i = 0; i <= MAX_PENDING_PAIRINGS; i++) {
      await requestPairing(store, 'telegram', peer(`u${i}`), T0 + i);
    }
    const { pending } = await listPairings(store, 'telegram', T0 + MAX_PENDING_PAIRINGS);
    expect(pending).toHaveLength(MAX_PENDING_PAIRINGS);
    expect(pending[0]?.peerId).toBe('u1');
    expect((await listPairings(store, 'telegram', T0 + 2 * PAIRING_CODE_TTL_MS)).pending).toEqual([]);
  });

  it('two concurrent approvals of different codes both survive', async () => {
    const store = new MemoryStore();
    const a = await requestPairing(store, 'telegram', peer('a'), T0);
    const b = await requestPairing(store, 'telegram', peer('b'), T0);
    await Promise.all([
      approvePairing(store, 'telegram', a.record.code!, T0 + 1),
      approvePairing(store, 'telegram', b.record.code!, T0 + 1),
    ]);
    const { approved } = await listPairings(store, 'telegram', T0 + 2);
    expect(approved.map((p) => p.peerId).sort()).toEqual(['a', 'b']);
  });

  it('records when the peer was told the code, and revokes', async () => {
    const store = new MemoryStore();
    const access = createPairingAccess(store, 'telegram');
    await access.request(peer('u1'));
    await access.markNotified('default', 'u1', T0 + 7);
    expect((await store.getPairing('telegram', 'default', 'u1'))?.notifiedAt).toBe(T0 + 7);
    expect(await access.revoke('default', 'u1')).toBe(true);
    expect((await access.list()).pending).toEqual([]);
  });

  it('adopts records kept elsewhere unless the peer or the code is already known', async () => {
    const store = new MemoryStore();
    const access = createPairingAccess(store, 'whatsapp');
    const approved = {
      accountId: 'default',
      peerId: 'p1',
      status: 'approved' as const,
      createdAt: T0,
      approvedAt: T0,
    };
    expect(await access.adopt(approved)).toBe(true);
    expect(await access.adopt({ ...approved, approvedAt: T0 + 1 })).toBe(false);
    const { record } = await access.request(peer('p2'));
    const clash = {
      accountId: 'default',
      peerId: 'p3',
      status: 'pending' as const,
      code: record.code,
      createdAt: T0,
    };
    expect(await access.adopt(clash)).toBe(false);
    expect((await store.getPairing('whatsapp', 'default', 'p1'))?.approvedAt).toBe(T0);
  });
});
