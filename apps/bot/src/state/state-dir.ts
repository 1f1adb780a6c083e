import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ColloquyError } from '@colloquy/core';
import type { McpServerStatus, OutboxStats, ProviderHealth } from '@colloquy/runtime';
import type { DatabaseOutage } from './database-outage.js';
import type { DiskFull } from './disk-full.js';

/** File names inside the state directory. */
export const STATE_FILES = {
  database: 'colloquy.db',
  adminToken: 'admin-token',
  cookieSecret: 'webchat-cookie-secret',
  runInfo: 'run.json',
  telegram: 'telegram',
  whatsapp: 'whatsapp',
  workspaces: 'workspaces',
} as const;

/**
 * Creates the state directory (mode 0700) when missing. One that exists with looser permissions
 * (made by hand with 0755, say) is tightened to 0700, since it holds every transcript; `onTighten`
 * is told, so the caller can warn.
 *
 * @param dir - the absolute state directory
 * @param onTighten - called with what was tightened
 * @throws ColloquyError `CONFIG_INVALID` when it cannot be created, or belongs to another user
 *   (the message names the path)
 */
export async function ensureStateDir(dir: string, onTighten?: (what: string) => void): Promise<void> {
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new ColloquyError(
      'CONFIG_INVALID',
      `Cannot create the state directory ${dir}: ${(error as Error).message}. Pick another with --state-dir or app.stateDir.`,
      { path: dir },
      { cause: error },
    );
  }
  const info = await stat(dir);
  const uid = process.getuid?.();
  if (uid !== undefined && info.uid !== uid) {
    throw new ColloquyError(
      'CONFIG_INVALID',
      `The state directory ${dir} belongs to another user (uid ${info.uid}); run Colloquy as that user, or pick a directory of your own with --state-dir or app.stateDir.`,
      { path: dir, owner: info.uid },
    );
  }
  if ((info.mode & 0o077) !== 0) {
    await chmod(dir, 0o700);
    onTighten?.(`${dir} (was ${(info.mode & 0o777).toString(8)}, now 700)`);
  }
}

/**
 * Makes files that exist readable by their owner only (0600): the database and its `-wal` and
 * `-shm` companions, which SQLite creates with the process umask.
 *
 * @param files - absolute paths; missing ones are skipped
 * @param onTighten - called with each file that was tightened
 */
export async function tightenFiles(
  files: readonly string[],
  onTighten?: (what: string) => void,
): Promise<void> {
  for (const file of files) {
    const info = await stat(file).catch(() => undefined);
    if (!info || (info.mode & 0o077) === 0) continue;
    await chmod(file, 0o600);
    onTighten?.(`${file} (was ${(info.mode & 0o777).toString(8)}, now 600)`);
  }
}

/**
 * Creates an empty file readable by its owner only (0600) when it is missing; an existing file is
 * left as it is. SQLite accepts an empty file as a new database and creates its `-wal` and `-shm`
 * companions with the database file's permissions, so a fresh state directory never holds a
 * transcript others can read, and nothing needs tightening afterwards.
 *
 * @param file - the absolute path
 * @returns true when the file was created now
 */
export async function createPrivateFile(file: string): Promise<boolean> {
  try {
    await writeFile(file, '', { mode: 0o600, flag: 'wx' });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

/** A secret read from (or just written to) the state directory. */
export interface StateSecret {
  value: string;
  /** True when it did not exist and was generated now. */
  created: boolean;
  file: string;
}

/**
 * Reads a secret file, or generates a random one and writes it with mode 0600 (created atomically,
 * never overwriting a file another process wrote first). An existing file readable by others is
 * tightened to 0600.
 *
 * @param dir - the state directory (must exist)
 * @param name - the file name
 * @param bytes - random bytes of a new secret (base64url-encoded)
 * @returns the secret and whether it was created
 */
export async function readOrCreateSecret(dir: string, name: string, bytes = 24): Promise<StateSecret> {
  const file = join(dir, name);
  const existing = await readSecretFile(file);
  if (existing !== undefined) return { value: existing, created: false, file };
  const value = randomBytes(bytes).toString('base64url');
  try {
    await writeFile(file, `${value}\n`, { mode: 0o600, flag: 'wx' });
    return { value, created: true, file };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const raced = await readSecretFile(file);
    if (raced === undefined) throw error;
    return { value: raced, created: false, file };
  }
}

/**
 * Reads a secret file (trimmed); `undefined` when it does not exist or is empty.
 *
 * @param file - the path
 * @returns the secret
 */
export async function readSecretFile(file: string): Promise<string | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const info = await stat(file);
  if ((info.mode & 0o077) !== 0) await chmod(file, 0o600).catch(() => undefined);
  const value = text.trim();
  return value === '' ? undefined : value;
}

/** What a running bot writes to `run.json`, so the CLI finds it. */
export interface RunInfo {
  pid: number;
  startedAt: number;
  /** `ws://host:port` of the gateway. */
  gatewayUrl: string;
  /** The web chat page, when it runs. */
  webchatUrl?: string;
  /** The default model, when one is configured. */
  model?: string;
  /** Channel states by id, refreshed while the bot runs. */
  channels: Record<string, { state: string; detail?: string }>;
  /** The configured MCP servers with their state and known tools, refreshed while the bot runs. */
  mcp?: McpServerStatus[];
  /** Set while the database has been unreachable for longer than `storage.unreachableAfterSeconds`. */
  database?: DatabaseOutage;
  /** Set while the disk holding the SQLite database is full and the store refuses writes. */
  disk?: DiskFull;
  /** Set while replies wait in the delivery outbox (being sent, or waiting for their platform). */
  outbox?: OutboxStats;
  /**
   * The model providers called so far, by id: their circuit breaker (`closed`, `open` or
   * `half-open`) and limiter figures, as of `updatedAt`.
   */
  providers?: Record<string, ProviderHealth>;
  updatedAt: number;
}

/**
 * Writes `run.json` atomically (temp file + rename, mode 0600).
 *
 * @param dir - the state directory
 * @param info - what to write
 */
export async function writeRunInfo(dir: string, info: RunInfo): Promise<void> {
  const file = join(dir, STATE_FILES.runInfo);
  const temp = `${file}.${process.pid}.tmp`;
  await writeFile(temp, `${JSON.stringify(info, null, 2)}\n`, { mode: 0o600 });
  await rename(temp, file);
}

/**
 * Reads `run.json`; `undefined` when absent, unreadable, or written by a process that is gone.
 *
 * @param dir - the state directory
 * @returns the run info of a live bot
 */
export async function readRunInfo(dir: string): Promise<RunInfo | undefined> {
  let info: RunInfo;
  try {
    info = JSON.parse(await readFile(join(dir, STATE_FILES.runInfo), 'utf8')) as RunInfo;
  } catch {
    return undefined;
  }
  if (typeof info.pid !== 'number' || typeof info.gatewayUrl !== 'string') return undefined;
  return isAlive(info.pid) ? info : undefined;
}

/**
 * Whether a process with this pid exists (one of another user counts).
 *
 * @param pid - the process id
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes `run.json` when it was written by process `pid` (a newer bot's file is left alone).
 *
 * @param dir - the state directory
 * @param pid - the process that wrote it
 */
export async function removeRunInfo(dir: string, pid: number): Promise<void> {
  const file = join(dir, STATE_FILES.runInfo);
  try {
    const info = JSON.parse(await readFile(file, 'utf8')) as Partial<RunInfo>;
    if (info.pid === pid) await rm(file, { force: true });
  } catch {
    // absent or unreadable: nothing to remove
  }
}
