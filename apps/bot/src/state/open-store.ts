import { join } from 'node:path';
import type { Logger } from '@colloquy/core';
import type { Store } from '@colloquy/core/store';
import type { BotConfig } from '../config/load-config.js';
import { createPrivateFile, ensureStateDir, STATE_FILES, tightenFiles } from './state-dir.js';

/**
 * Opens the bot's Store: PostgreSQL when `storage.url` (or `COLLOQUY_DATABASE_URL`) is set, else
 * SQLite in the state directory (`colloquy.db`, the directory created when missing, with group
 * commit), the embedded default. The PostgreSQL driver is loaded only when it is used.
 *
 * @param config - the loaded config
 * @param log - the app logger
 * @returns the open store; close it with `await store.close()`
 * @throws ColloquyError `STORE_ERROR` when the database cannot be reached (the message names host
 *   and port, never the password), `STORE_VERSION` when it was written by a newer Colloquy
 */
export async function openBotStore(config: BotConfig, log: Logger): Promise<Store> {
  const url = config.storage.url;
  if (url !== undefined) {
    const { openPostgresStore } = await import('@colloquy/store-postgres');
    return openPostgresStore({ url, logger: log, preparedStatements: config.storage.preparedStatements });
  }
  const tightened = (what: string) => log.warn({ path: what }, 'tightened the permissions of a state file');
  await ensureStateDir(config.stateDir, tightened);
  const { openSqliteStore } = await import('@colloquy/store-sqlite');
  const file = join(config.stateDir, STATE_FILES.database);
  // A new database starts 0600, and SQLite gives its companions the same mode: only files that were
  // already there (made by an older release, or copied in by hand) can need tightening, and only
  // those are worth a warning.
  await createPrivateFile(file);
  // Group commit: the transactions of one event-loop turn share one SQLite commit. The runtime awaits
  // `flush()` wherever a write must be durable (before acknowledging a message, calling the model,
  // or delivering a reply), so nothing is acknowledged before it is on disk. The log is copied into
  // the file every 10,000 pages (about 40 MB) rather than SQLite's 1,000: that copy runs inside a
  // commit and syncs the file, and hot pages written many times are copied once. No checkpoint
  // worker (backgroundCheckpoint): in the Telegram bench it cost about 0.1-0.3 ms of CPU per turn and
  // 20 MB of memory, copying hot pages at every pass, and the bot's latency did not improve; it pays
  // off only at rates near a thousand messages a second (the runtime's steady bench).
  // No nested-call check: the runtime's transactions are tested with it on; off, a turn costs about 8%
  // less CPU on Node 22 (see SerializedStoreOptions.detectNestedCalls).
  const store = openSqliteStore({
    file,
    logger: log,
    groupCommit: true,
    walAutocheckpointPages: 10_000,
    detectNestedCalls: false,
    // A full disk refuses new writes (and so new messages) in time, keeps what was acknowledged, and
    // resumes by itself once space is freed; `diskFullOf` reports it to status and /healthz.
    diskSpace: {
      reserveBytes: config.storage.diskReserveBytes,
      minFreeBytes: config.storage.diskMinFreeBytes,
    },
  });
  await tightenFiles([file, `${file}-wal`, `${file}-shm`], tightened);
  return store;
}

/**
 * Which store the bot uses, for banners: `PostgreSQL, postgres://user:***@host:5432/db` or
 * `SQLite, colloquy.db in the state directory`. Never shows a password.
 *
 * @param config - the loaded config
 */
export function describeStorage(config: BotConfig): string {
  const url = config.storage.url;
  if (url === undefined) return 'SQLite, colloquy.db in the state directory';
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return `PostgreSQL, ${parsed.toString()}`;
  } catch {
    return 'PostgreSQL';
  }
}
