import { randomInt } from 'node:crypto';
import { ColloquyError } from '../errors/colloquy-error.js';
import type { PairingRecord } from '../interfaces/records.js';
import type { StoreTransaction } from '../interfaces/store.js';

/** How long a pairing code approves its peer: one hour. */
export const PAIRING_CODE_TTL_MS = 60 * 60 * 1000;
/** The most pending codes one channel keeps; the oldest are dropped first. */
export const MAX_PENDING_PAIRINGS = 100;

const CODE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
const CODE_LENGTH = 8;

/** Who asks to pair: a peer of one bot account. */
export interface PairingPeer {
  /** The bot account the peer wrote to. */
  accountId: string;
  /** The platform's stable id of the person. */
  peerId: string;
  /** A human name for listings. */
  displayName?: string;
  /** Platform extras kept with the pairing (username, JID, ...). */
  meta?: Record<string, unknown>;
}

/** The answer of {@link requestPairing}. */
export interface PairingRequestResult {
  /** The peer's pairing: pending with its code, or approved if it was approved meanwhile. */
  record: PairingRecord;
  /** True when a new code was issued; false when the peer's unexpired code was reused. */
  created: boolean;
}

/** A one-time code from an alphabet without look-alike characters (no 0/O, 1/I). */
export function createPairingCode(): string {
  let code = '';
  for (let i = 0; i < CODE_LENGTH; i++) code += CODE_ALPHABET[randomInt(CODE_ALPHABET.length)];
  return code;
}

/** Normalises a code as a person types it: spaces dropped, upper case. */
export const normalizePairingCode = (code: string): string => code.replace(/\s+/g, '').toUpperCase();

const isLive = (record: PairingRecord, now: number): boolean =>
  record.status === 'approved' || (record.expiresAt ?? Number.POSITIVE_INFINITY) > now;

/**
 * Issues a pairing code for a peer, or returns the peer's unexpired one, in one transaction. The
 * code is unique among the channel's pending codes; past `MAX_PENDING_PAIRINGS` (100) the oldest
 * pending codes are dropped.
 *
 * @param store - the store (or an open transaction)
 * @param channel - the channel plugin id
 * @param peer - who asks
 * @param now - the clock (default `Date.now()`)
 * @returns the pending (or, if approved meanwhile, approved) record and whether it is new
 */
export function requestPairing(
  store: StoreTransaction,
  channel: string,
  peer: PairingPeer,
  now = Date.now(),
): Promise<PairingRequestResult> {
  return store.transaction(async (tx) => {
    const existing = await tx.getPairing(channel, peer.accountId, peer.peerId);
    if (existing && isLive(existing, now)) return { record: existing, created: false };
    const pending = await tx.listPairings({ channel, status: 'pending' });
    const live = pending.filter((p) => isLive(p, now));
    for (const stale of pending.filter((p) => !isLive(p, now))) {
      await tx.deletePairing(channel, stale.accountId, stale.peerId);
    }
    for (const oldest of live.slice(0, Math.max(0, live.length - MAX_PENDING_PAIRINGS + 1))) {
      await tx.deletePairing(channel, oldest.accountId, oldest.peerId);
    }
    const taken = new Set(live.map((p) => p.code));
    let code = createPairingCode();
    while (taken.has(code)) code = createPairingCode();
    const record: PairingRecord = {
      channel,
      accountId: peer.accountId,
      peerId: peer.peerId,
      status: 'pending',
      code,
      createdAt: now,
      expiresAt: now + PAIRING_CODE_TTL_MS,
      ...(peer.displayName !== undefined ? { displayName: peer.displayName } : {}),
      ...(peer.meta !== undefined ? { meta: peer.meta } : {}),
    };
    await tx.putPairing(record);
    return { record, created: true };
  });
}

/**
 * Approves a pending code: its peer may DM the bot from now on. The bot (in any process on the
 * same store) sees the approval on the peer's next message.
 *
 * @param store - the store (or an open transaction)
 * @param channel - the channel plugin id
 * @param code - the code as the person typed it (spaces and case are ignored)
 * @param now - the clock (default `Date.now()`)
 * @returns the approved record
 * @throws ColloquyError `INVALID_ARGUMENT` when no unexpired pending code matches
 * @example
 * ```ts
 * const approved = await approvePairing(store, 'telegram', 'K7QM X2PA');
 * console.log(`approved ${approved.displayName ?? approved.peerId}`);
 * ```
 */
export function approvePairing(
  store: StoreTransaction,
  channel: string,
  code: string,
  now = Date.now(),
): Promise<PairingRecord> {
  const wanted = normalizePairingCode(code);
  return store.transaction(async (tx) => {
    const [match] = (await tx.listPairings({ channel, code: wanted })).filter((p) => isLive(p, now));
    if (!match) {
      throw new ColloquyError(
        'INVALID_ARGUMENT',
        `No pending ${channel} pairing code "${wanted}". Codes expire after an hour: ask the person to message the bot again for a new one, and list codes with \`colloquy pairing list\`.`,
        { channel, code: wanted },
      );
    }
    const { code: _used, expiresAt: _expiry, notifiedAt: _notified, ...rest } = match;
    const approved: PairingRecord = { ...rest, status: 'approved', approvedAt: now };
    await tx.putPairing(approved);
    return approved;
  });
}

/**
 * Forgets a peer's approval (or pending code); their next DM starts pairing again.
 *
 * @returns true when there was something to forget
 */
export function revokePairing(
  store: StoreTransaction,
  channel: string,
  accountId: string,
  peerId: string,
): Promise<boolean> {
  return store.deletePairing(channel, accountId, peerId);
}

/**
 * A channel's unexpired pending codes and its approvals, oldest first.
 *
 * @param now - the clock (default `Date.now()`)
 */
export async function listPairings(
  store: StoreTransaction,
  channel: string,
  now = Date.now(),
): Promise<{ pending: PairingRecord[]; approved: PairingRecord[] }> {
  const all = await store.listPairings({ channel });
  return {
    pending: all.filter((p) => p.status === 'pending' && isLive(p, now)),
    approved: all
      .filter((p) => p.status === 'approved')
      .sort((a, b) => (a.approvedAt ?? 0) - (b.approvedAt ?? 0)),
  };
}

/**
 * Pairing state of one channel, as a plugin sees it (`ChannelContext.pairing`). Backed by the
 * Store, so the bot and `colloquy pairing approve` in another process share one source of truth.
 */
export interface PairingAccess {
  /** True when the peer was approved. */
  isApproved(accountId: string, peerId: string): Promise<boolean>;
  /** Issues (or returns the unexpired) code for a peer; `now` defaults to `Date.now()`. */
  request(peer: PairingPeer, now?: number): Promise<PairingRequestResult>;
  /** Records that the peer was told the code at `at` (for re-notification throttling). */
  markNotified(accountId: string, peerId: string, at: number): Promise<void>;
  /** Approves by code (for plugins with an in-chat approve command); `now` defaults to `Date.now()`. */
  approve(code: string, now?: number): Promise<PairingRecord>;
  /** Forgets a peer. */
  revoke(accountId: string, peerId: string): Promise<boolean>;
  /** Pending codes and approvals of this channel; `now` (default `Date.now()`) hides expired codes. */
  list(now?: number): Promise<{ pending: PairingRecord[]; approved: PairingRecord[] }>;
  /**
   * Takes over a record kept elsewhere before (a plugin's old pairing file): inserted unless the
   * peer already has a pairing. Resolves true when inserted.
   */
  adopt(record: Omit<PairingRecord, 'channel'>): Promise<boolean>;
}

/**
 * The {@link PairingAccess} of one channel over a store.
 *
 * @param store - the store
 * @param channel - the channel plugin id
 */
export function createPairingAccess(store: StoreTransaction, channel: string): PairingAccess {
  return {
    isApproved: async (accountId, peerId) =>
      (await store.getPairing(channel, accountId, peerId))?.status === 'approved',
    request: (peer, now) => requestPairing(store, channel, peer, now),
    markNotified: (accountId, peerId, at) =>
      store.transaction(async (tx) => {
        const record = await tx.getPairing(channel, accountId, peerId);
        if (record?.status === 'pending') await tx.putPairing({ ...record, notifiedAt: at });
      }),
    approve: (code, now) => approvePairing(store, channel, code, now),
    revoke: (accountId, peerId) => revokePairing(store, channel, accountId, peerId),
    list: (now) => listPairings(store, channel, now),
    adopt: (record) =>
      store.transaction(async (tx) => {
        if (await tx.getPairing(channel, record.accountId, record.peerId)) return false;
        if (record.status === 'pending' && record.code !== undefined) {
          const [holder] = await tx.listPairings({ channel, code: record.code });
          if (holder) return false;
        }
        await tx.putPairing({ ...record, channel });
        return true;
      }),
  };
}
