import { randomInt } from 'node:crypto';
import { join } from 'node:path';
import { ColloquyError } from '@colloquy/core';
import {
  createKeyedQueue,
  nodeStateFs,
  readFileIfExists,
  type StateFs,
  writeFileAtomic,
} from './atomic-file.js';

/** A pairing code waiting for the owner's approval. */
export interface WhatsAppPendingPairing {
  code: string;
  /** The stable peer id (phone number, or LID JID when the number is unknown). */
  peerId: string;
  /** The JID the person wrote from. */
  jid: string;
  name?: string;
  /** Epoch ms. */
  createdAt: number;
}

/** A person the owner approved for direct chats. */
export interface WhatsAppApprovedPeer {
  peerId: string;
  name?: string;
  /** Epoch ms. */
  approvedAt: number;
}

/** The pairing file: pending codes and approved peers. */
export interface WhatsAppPairings {
  pending: WhatsAppPendingPairing[];
  approved: WhatsAppApprovedPeer[];
}

const FILE = 'pairing.json';
/** A code is valid for one hour. */
export const PAIRING_CODE_TTL_MS = 60 * 60 * 1000;
const MAX_PENDING = 50;
const ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

const fileOf = (stateDir: string): string => join(stateDir, FILE);
const queue = createKeyedQueue();

async function readPairings(stateDir: string, fs: StateFs): Promise<WhatsAppPairings> {
  const path = fileOf(stateDir);
  const text = await readFileIfExists(path, fs);
  if (text === undefined) return { pending: [], approved: [] };
  try {
    const parsed = JSON.parse(text) as Partial<WhatsAppPairings>;
    return { pending: parsed.pending ?? [], approved: parsed.approved ?? [] };
  } catch (cause) {
    throw new ColloquyError(
      'STORE_CORRUPT',
      `WhatsApp pairing file ${path} is corrupt (not valid JSON). Fix or delete it; deleting it forgets approved people, who then pair again.`,
      { file: path },
      { cause },
    );
  }
}

const writePairings = (stateDir: string, data: WhatsAppPairings, fs: StateFs): Promise<void> =>
  writeFileAtomic(fileOf(stateDir), `${JSON.stringify({ version: 1, ...data }, null, 2)}\n`, fs);

const fresh = (p: WhatsAppPendingPairing, now: number): boolean => now - p.createdAt < PAIRING_CODE_TTL_MS;

/** Read-modify-write of the pairing file, serialised within this process. */
const update = <T>(stateDir: string, fs: StateFs, change: (data: WhatsAppPairings) => T): Promise<T> =>
  queue(fileOf(stateDir), async () => {
    const data = await readPairings(stateDir, fs);
    const result = change(data);
    await writePairings(stateDir, data, fs);
    return result;
  });

/**
 * Lists pending pairing codes (unexpired) and approved people.
 *
 * @param stateDir - the WhatsApp plugin's state dir
 * @throws ColloquyError `STORE_CORRUPT` when the pairing file is not valid JSON
 */
export async function listWhatsAppPairings(stateDir: string): Promise<WhatsAppPairings> {
  const data = await readPairings(stateDir, nodeStateFs);
  const now = Date.now();
  return { pending: data.pending.filter((p) => fresh(p, now)), approved: data.approved };
}

/**
 * Approves a pairing code that someone received from the bot in a direct chat; from then on the
 * bot answers them (with `dmPolicy: 'pairing'`). A running plugin picks the approval up at once.
 *
 * @param stateDir - the WhatsApp plugin's state dir
 * @param code - the code, case-insensitive
 * @returns the approved person
 * @throws ColloquyError `INVALID_ARGUMENT` when no unexpired pending code matches
 * @example
 * ```ts
 * const peer = await approveWhatsAppPairing('/var/lib/bot/whatsapp', 'K7QX2M9P');
 * console.log(`approved ${peer.peerId}`);
 * ```
 */
export async function approveWhatsAppPairing(stateDir: string, code: string): Promise<WhatsAppApprovedPeer> {
  const wanted = code.trim().toUpperCase();
  const now = Date.now();
  const approved = await update(stateDir, nodeStateFs, (data) => {
    const match = data.pending.find((p) => p.code === wanted && fresh(p, now));
    if (!match) return undefined;
    data.pending = data.pending.filter((p) => p.peerId !== match.peerId && fresh(p, now));
    const peer: WhatsAppApprovedPeer = { peerId: match.peerId, approvedAt: now };
    if (match.name !== undefined) peer.name = match.name;
    data.approved = [...data.approved.filter((a) => a.peerId !== match.peerId), peer];
    return peer;
  });
  if (!approved) {
    throw new ColloquyError(
      'INVALID_ARGUMENT',
      `No pending WhatsApp pairing code "${wanted}". Codes expire after one hour: ask the person to message the bot again for a new code.`,
      { code: wanted },
    );
  }
  return approved;
}

/** The plugin's side of pairing: who is approved, and codes for newcomers. */
export class PairingStore {
  private readonly approved = new Set<string>();

  constructor(
    private readonly stateDir: string,
    private readonly fs: StateFs = nodeStateFs,
  ) {}

  /** True when the peer was approved (re-reads the file on a miss, so CLI approvals apply at once). */
  async isApproved(peerId: string): Promise<boolean> {
    if (this.approved.has(peerId)) return true;
    const data = await readPairings(this.stateDir, this.fs);
    for (const a of data.approved) this.approved.add(a.peerId);
    return this.approved.has(peerId);
  }

  /** The peer's pending code, creating one if needed. `created` says whether it is new. */
  request(peer: { peerId: string; jid: string; name?: string }): Promise<{ code: string; created: boolean }> {
    const now = Date.now();
    return update(this.stateDir, this.fs, (data) => {
      data.pending = data.pending.filter((p) => fresh(p, now));
      const existing = data.pending.find((p) => p.peerId === peer.peerId);
      if (existing) return { code: existing.code, created: false };
      const taken = new Set(data.pending.map((p) => p.code));
      let code = '';
      do {
        code = Array.from({ length: 8 }, () => ALPHABET[randomInt(ALPHABET.length)]).join('');
      } while (taken.has(code));
      const entry: WhatsAppPendingPairing = { code, peerId: peer.peerId, jid: peer.jid, createdAt: now };
      if (peer.name !== undefined) entry.name = peer.name;
      data.pending = [...data.pending, entry].slice(-MAX_PENDING);
      return { code, created: true };
    });
  }
}
