import { randomBytes, randomUUID } from 'node:crypto';
import { mkdir, open, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ColloquyError } from '@colloquy/core';

/** A DM sender waiting for the owner's approval. */
export interface TelegramPairingRequest {
  /** The one-time code the user was sent. */
  code: string;
  accountId: string;
  userId: string;
  username?: string;
  name?: string;
  /** Epoch ms. */
  createdAt: number;
  /** Epoch ms after which the code no longer approves anyone. */
  expiresAt: number;
  /** Epoch ms of the last time the user was told the code. */
  notifiedAt: number;
}

/** A user the owner approved. */
export interface TelegramApprovedUser {
  accountId: string;
  userId: string;
  username?: string;
  name?: string;
  /** Epoch ms. */
  approvedAt: number;
}

/** The pairing state file. */
export interface TelegramPairingState {
  version: 1;
  pending: TelegramPairingRequest[];
  approved: TelegramApprovedUser[];
}

/** The file name of the pairing state inside the state dir. */
export const PAIRING_FILE = 'telegram-pairing.json';
/** How long a code stays valid. */
export const PAIRING_CODE_TTL_MS = 60 * 60 * 1000;
/** The most codes kept pending at once; the oldest are dropped first. */
export const MAX_PENDING_PAIRINGS = 100;

const CODE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
const CODE_LENGTH = 8;
const LOCK_STALE_MS = 10_000;
const LOCK_WAIT_MS = 5_000;

/** Makes a one-time code from an alphabet without look-alike characters (no 0/O, 1/I). */
export function createPairingCode(): string {
  const bytes = randomBytes(CODE_LENGTH);
  let code = '';
  for (const byte of bytes) code += CODE_ALPHABET[byte % CODE_ALPHABET.length];
  return code;
}

/**
 * Reads the pairing state; a missing file is an empty state.
 *
 * @throws ColloquyError `STORE_CORRUPT` when the file is not valid pairing JSON
 */
export async function readPairingState(stateDir: string): Promise<TelegramPairingState> {
  const file = join(stateDir, PAIRING_FILE);
  let raw: string;
  try {
    raw = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return emptyState();
    throw error;
  }
  try {
    const parsed = JSON.parse(raw) as Partial<TelegramPairingState>;
    if (parsed.version !== 1 || !Array.isArray(parsed.pending) || !Array.isArray(parsed.approved)) {
      throw new Error('unexpected shape');
    }
    return { version: 1, pending: parsed.pending, approved: parsed.approved };
  } catch (error) {
    throw new ColloquyError(
      'STORE_CORRUPT',
      `The Telegram pairing file ${file} is not valid. Fix or delete it (approved users are lost when deleted).`,
      { file },
      { cause: error },
    );
  }
}

/**
 * Reads, changes and writes the pairing state under a lock file, so the bot process and the CLI
 * never lose each other's writes. The write is atomic (temp file + rename).
 */
export async function updatePairingState<T>(
  stateDir: string,
  change: (state: TelegramPairingState) => T,
): Promise<T> {
  await mkdir(stateDir, { recursive: true });
  const release = await acquireLock(join(stateDir, `${PAIRING_FILE}.lock`));
  try {
    const state = await readPairingState(stateDir);
    const result = change(state);
    const file = join(stateDir, PAIRING_FILE);
    const temp = `${file}.${process.pid}.${randomUUID()}.tmp`;
    await writeFile(temp, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
    await rename(temp, file);
    return result;
  } finally {
    await release();
  }
}

/** Drops expired codes and keeps at most {@link MAX_PENDING_PAIRINGS}. */
export function prunePending(state: TelegramPairingState, now: number): void {
  state.pending = state.pending.filter((p) => p.expiresAt > now);
  if (state.pending.length > MAX_PENDING_PAIRINGS) {
    state.pending.sort((a, b) => a.createdAt - b.createdAt);
    state.pending.splice(0, state.pending.length - MAX_PENDING_PAIRINGS);
  }
}

/**
 * Approves a pending pairing code: the user it was issued to may now DM the bot.
 * Called by the app's CLI (`colloquy pairing approve telegram <code>`); the running bot sees the
 * approval on the user's next message.
 *
 * @param stateDir - the plugin's state directory (`TelegramPluginOptions.stateDir`)
 * @param code - the code the user received (case and spaces are ignored)
 * @returns the approved user
 * @throws ColloquyError `INVALID_ARGUMENT` when no pending code matches (unknown or expired)
 * @example
 * ```ts
 * const user = await approveTelegramPairing('.colloquy/telegram', 'K7QMX2PA');
 * console.log(`approved ${user.username ?? user.userId}`);
 * ```
 */
export async function approveTelegramPairing(stateDir: string, code: string): Promise<TelegramApprovedUser> {
  const wanted = code.replace(/\s+/g, '').toUpperCase();
  const now = Date.now();
  const approved = await updatePairingState(stateDir, (state) => {
    prunePending(state, now);
    const request = state.pending.find((p) => p.code === wanted);
    if (!request) return undefined;
    state.pending = state.pending.filter((p) => p !== request);
    state.approved = state.approved.filter(
      (a) => !(a.accountId === request.accountId && a.userId === request.userId),
    );
    const user: TelegramApprovedUser = {
      accountId: request.accountId,
      userId: request.userId,
      approvedAt: now,
      ...(request.username !== undefined ? { username: request.username } : {}),
      ...(request.name !== undefined ? { name: request.name } : {}),
    };
    state.approved.push(user);
    return user;
  });
  if (!approved) {
    throw new ColloquyError(
      'INVALID_ARGUMENT',
      `No pending Telegram pairing code "${wanted}". Codes expire after an hour; ask the user to message the bot again for a new one, and list codes with listTelegramPairings.`,
      { code: wanted },
    );
  }
  return approved;
}

/**
 * Lists pending codes (unexpired) and approved users, for the app's CLI.
 *
 * @param stateDir - the plugin's state directory
 * @returns `{ pending, approved }`, oldest first
 * @throws ColloquyError `STORE_CORRUPT` when the state file is damaged
 */
export async function listTelegramPairings(
  stateDir: string,
): Promise<{ pending: TelegramPairingRequest[]; approved: TelegramApprovedUser[] }> {
  const state = await readPairingState(stateDir);
  prunePending(state, Date.now());
  return {
    pending: [...state.pending].sort((a, b) => a.createdAt - b.createdAt),
    approved: [...state.approved].sort((a, b) => a.approvedAt - b.approvedAt),
  };
}

/**
 * Revokes an approved user; their next DM starts pairing again.
 *
 * @returns true when the user was approved before
 */
export async function revokeTelegramPairing(
  stateDir: string,
  accountId: string,
  userId: string,
): Promise<boolean> {
  return updatePairingState(stateDir, (state) => {
    const before = state.approved.length;
    state.approved = state.approved.filter((a) => !(a.accountId === accountId && a.userId === userId));
    return state.approved.length !== before;
  });
}

function emptyState(): TelegramPairingState {
  return { version: 1, pending: [], approved: [] };
}

async function acquireLock(lockFile: string): Promise<() => Promise<void>> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      const handle = await open(lockFile, 'wx');
      await handle.close();
      return () => rm(lockFile, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const age = await stat(lockFile).then(
      (s) => Date.now() - s.mtimeMs,
      () => 0,
    );
    if (age > LOCK_STALE_MS) {
      await rm(lockFile, { force: true });
      continue;
    }
    if (Date.now() > deadline) {
      throw new ColloquyError(
        'STORE_LOCKED',
        `The Telegram pairing file is locked by another process (${lockFile}). Retry; delete the lock file if no Colloquy process is running.`,
        { lockFile },
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
