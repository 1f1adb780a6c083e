import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { ColloquyError, type Logger, silentLogger } from '@colloquy/core';
import Database from 'better-sqlite3';
import {
  BackgroundCheckpointer,
  type BackgroundCheckpointOptions,
  resolveBackgroundCheckpoint,
} from './background-checkpoint.js';
import { type DiskSpaceOptions, resolveDiskSpace } from './disk-space.js';
import { inspectStoreFile, type StoreFileHeader, walSize } from './file-header.js';
import { type GroupCommitOptions, resolveGroupCommit } from './group-commit.js';
import { COLLOQUY_APPLICATION_ID, migrate, readUserVersion, SQLITE_SCHEMA_VERSION } from './migrations.js';
import type { SqliteSynchronous } from './sqlite-engine.js';
import { toStoreError } from './sqlite-errors.js';
import { SqliteStore } from './sqlite-store.js';

/** Options of {@link openSqliteStore}. */
export interface SqliteStoreOptions {
  /**
   * The database file. Created (with its directory) when missing; `:memory:` keeps everything in
   * memory (no WAL, nothing survives `close`).
   */
  file: string;
  /**
   * How hard a commit waits for the disk (default `'NORMAL'`). In WAL mode `NORMAL` never loses a
   * committed transaction when the process crashes, but the last transactions can be lost when the
   * machine loses power. `FULL` syncs the log on every commit and survives power loss, at the cost
   * of one fsync per transaction.
   */
  synchronous?: SqliteSynchronous;
  /** How long a write waits for another process's write lock before `STORE_LOCKED` (default 5000 ms). */
  busyTimeoutMs?: number;
  /**
   * Open for reading only (default false): nothing is created or migrated, and writes throw
   * `STORE_ERROR`. The file must exist and be at the current schema version.
   */
  readonly?: boolean;
  /** Receives migration and maintenance messages, and group commit failures (default: silent). */
  logger?: Logger;
  /**
   * Group commit (default off). When on, `transaction` calls (and single writes) share one SQLite
   * commit per event-loop turn: each runs in a savepoint of a transaction that commits at the end
   * of the turn (`setImmediate`), after `maxDelayMs`, or when it holds `maxTransactions`. A
   * returned write is visible to this store at once but durable only once `store.flush()`
   * resolves; a crash before that loses it. If a group commit fails, `flush()` rejects and the
   * store refuses writes until reopened. `true` takes the defaults. Not with `readonly`.
   */
  groupCommit?: boolean | GroupCommitOptions;
  /**
   * The write-ahead log size, in pages, at which a commit also copies the log into the database file
   * (SQLite's `wal_autocheckpoint`; default 1000, SQLite's own). The copy runs inside the commit and
   * syncs the file, so on a busy store a larger value (say 10000, about 40 MB of log) makes commits
   * cheaper on average, since pages written many times are copied once. With `backgroundCheckpoint`, the
   * log size at which the main connection lets the log start over. `0` never checkpoints automatically
   * (call `checkpoint()`; with `backgroundCheckpoint`, the log then starts over only after a pause in
   * the writes).
   */
  walAutocheckpointPages?: number;
  /**
   * Checkpoint on a worker thread (default off), so the copy of the log into the file and its fsync
   * leave the event loop. A worker thread with its own connection runs
   * `PRAGMA wal_checkpoint(PASSIVE)`, which never blocks the main connection, every `intervalMs`
   * (default 20) once at least `minFrames` (default 200) log pages wait, and the commits stop
   * checkpointing. Once the worker reports a log of `walAutocheckpointPages` or more, the main
   * connection copies the few pages committed since (between two commits), so the next commit starts
   * the log over and the `-wal` file stays near that size. Worker errors are logged; if the worker
   * dies, the commits checkpoint again. `close()` stops the worker first. `true` takes the defaults.
   * Not with `readonly` or `:memory:`.
   */
  backgroundCheckpoint?: boolean | BackgroundCheckpointOptions;
  /**
   * Reject a Store method called on the store instead of the `tx` handle inside `transaction(fn)`
   * (default true); see `SerializedStoreOptions.detectNestedCalls` in `@colloquy/core` for what it
   * costs on Node 22 and when to turn it off.
   */
  detectNestedCalls?: boolean;
  /**
   * Survive a full disk (default off). Without it, a commit that finds the disk full rolls back the
   * writes not yet committed (no `flush()` reported them durable) and, with group commit, the store
   * refuses writes until reopened. With it, the store keeps a reserve file `<file>.reserve` (16 MiB by
   * default) and, when the disk runs low (or SQLite reports it full), deletes the reserve so the writes
   * under way can commit, refuses new writes with `STORE_ERROR` (`details.reason: 'disk-full'`) while
   * reads work, logs it once, and takes writes again by itself once space is freed (see
   * `SqliteStore.diskFullSince`). A flush called while writes are refused rejects if the disk undid
   * writes; call `flush()` right after the writes it covers. `true` takes the defaults. Not with
   * `readonly` or `:memory:`.
   */
  diskSpace?: boolean | DiskSpaceOptions;
}

const MEMORY = ':memory:';
/** SQLite's own `wal_autocheckpoint`, the default of `walAutocheckpointPages`. */
const SQLITE_AUTOCHECKPOINT_PAGES = 1000;

/**
 * Opens (or creates) a Colloquy store on an SQLite file: checks the file is an SQLite database of a
 * schema version this package understands, switches it to WAL mode and migrates it to
 * `SQLITE_SCHEMA_VERSION`. A file it refuses is never modified.
 *
 * @param options - the file and how to open it
 * @returns the open store; call `close()` when done
 * @throws `STORE_CORRUPT` when the file is not an SQLite database or is damaged
 * @throws `STORE_VERSION` when the file was written by a newer `@colloquy/store-sqlite`, or when a
 *   `readonly` open meets a file that still needs migrating
 * @throws `INVALID_ARGUMENT` when the file is another application's SQLite database, or options are invalid
 * @throws `STORE_LOCKED` when another process holds the write lock past `busyTimeoutMs` during migration
 * @example
 * ```ts
 * import { openSqliteStore } from '@colloquy/store-sqlite';
 *
 * const store = openSqliteStore({ file: './data/colloquy.db' });
 * store.putSession({ key: 'agent:main:main', sessionId: crypto.randomUUID(), agentId: 'main', kind: 'main', createdAt: Date.now(), updatedAt: Date.now() });
 * store.appendMessages('agent:main:main', [{ role: 'user', content: 'hello', timestamp: Date.now() }]);
 * console.log(store.readTail('agent:main:main', 20));
 * store.close();
 * ```
 */
export function openSqliteStore(options: SqliteStoreOptions): SqliteStore {
  const file = options.file === MEMORY ? MEMORY : resolve(options.file);
  const synchronous = options.synchronous ?? 'NORMAL';
  const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
  const readonly = options.readonly ?? false;
  const logger = (options.logger ?? silentLogger).child({ store: file });
  validateOptions(options, synchronous, busyTimeoutMs);
  const groupCommit = resolveGroupCommit(options.groupCommit);
  if (groupCommit !== undefined && readonly) {
    throw new ColloquyError(
      'INVALID_ARGUMENT',
      '`groupCommit` batches writes, and a `readonly` store has none: drop one of the two options.',
      {},
    );
  }
  const backgroundCheckpoint = resolveBackgroundCheckpoint(options.backgroundCheckpoint);
  if (backgroundCheckpoint !== undefined && (readonly || file === MEMORY)) {
    throw new ColloquyError(
      'INVALID_ARGUMENT',
      readonly
        ? '`backgroundCheckpoint` copies the log a writer leaves, and a `readonly` store writes none: drop one of the two options.'
        : '`backgroundCheckpoint` needs a file: an in-memory store (`:memory:`) has no write-ahead log.',
      { file, readonly },
    );
  }
  const diskSpace = resolveDiskSpace(options.diskSpace);
  if (diskSpace !== undefined && (readonly || file === MEMORY)) {
    throw new ColloquyError(
      'INVALID_ARGUMENT',
      readonly
        ? '`diskSpace` guards writes, and a `readonly` store makes none: drop one of the two options.'
        : '`diskSpace` needs a file on a disk: an in-memory store (`:memory:`) has none.',
      { file, readonly },
    );
  }
  const context = { file, busyTimeoutMs };

  if (file !== MEMORY) {
    const state = inspectStoreFile(file);
    if (state.kind === 'sqlite') {
      // The header is authoritative unless a write-ahead log may hold newer pages: then ask SQLite.
      const facts =
        state.header.walMode && walSize(file) > 0 ? probeWithSqlite(file, busyTimeoutMs) : state.header;
      checkFileFacts(file, facts, readonly);
    } else if (readonly) {
      throw new ColloquyError(
        'STORE_ERROR',
        `There is no Colloquy store at ${file} to open readonly; open it once without \`readonly\` to create it.`,
        { file },
      );
    } else mkdirSync(dirname(file), { recursive: true });
  }

  let db: Database.Database | undefined;
  let checkpointer: BackgroundCheckpointer | undefined;
  try {
    db = new Database(file, { readonly, fileMustExist: readonly, timeout: busyTimeoutMs });
    // Read the schema before anything can write: a damaged file fails here, untouched.
    db.prepare('SELECT count(*) FROM sqlite_schema').pluck().get();
    if (file !== MEMORY) checkFileFacts(file, readFacts(db), readonly);
    if (!readonly) {
      if (file !== MEMORY) {
        const mode = db.pragma('journal_mode = WAL', { simple: true });
        if (mode !== 'wal') {
          throw new ColloquyError(
            'STORE_ERROR',
            `Could not switch ${file} to WAL mode (it stayed "${String(mode)}"); put the store on a local disk.`,
            { file, journalMode: mode },
          );
        }
      }
      db.pragma(`synchronous = ${synchronous}`);
      // The journals that let a savepoint (a transaction inside a group commit batch) or a statement
      // with triggers roll back alone hold copies of the pages it changes: in memory, not in a temporary
      // file created, written page by page and deleted each time (about 70% of a busy store's writes).
      db.pragma('temp_store = MEMORY');
      if (options.walAutocheckpointPages !== undefined) {
        db.pragma(`wal_autocheckpoint = ${options.walAutocheckpointPages}`);
      }
    }
    db.pragma('foreign_keys = ON');
    let schemaVersion = readUserVersion(db);
    if (!readonly) {
      const result = migrate(db);
      schemaVersion = result.to;
      if (result.applied.length > 0) {
        logger.info({ from: result.from, to: result.to }, 'migrated the store schema');
      }
    }
    if (backgroundCheckpoint !== undefined) {
      const main = db;
      const startLogOverAt = options.walAutocheckpointPages ?? SQLITE_AUTOCHECKPOINT_PAGES;
      main.pragma('wal_autocheckpoint = 0');
      checkpointer = new BackgroundCheckpointer({
        file,
        settings: backgroundCheckpoint,
        startLogOverAt,
        logger,
        onWorkerLost: () => {
          if (main.open) main.pragma(`wal_autocheckpoint = ${startLogOverAt}`);
        },
      });
    }
    return new SqliteStore({
      db,
      file,
      readonly,
      synchronous,
      busyTimeoutMs,
      schemaVersion,
      logger,
      ...(groupCommit === undefined ? {} : { groupCommit }),
      ...(checkpointer === undefined ? {} : { checkpointer }),
      ...(diskSpace === undefined ? {} : { diskSpace }),
      ...(options.detectNestedCalls === undefined ? {} : { detectNestedCalls: options.detectNestedCalls }),
    });
  } catch (error) {
    void checkpointer?.stop();
    db?.close();
    throw toStoreError(error, context);
  }
}

/** What decides whether we may open a file: who wrote it, and at which schema version. */
type FileFacts = Pick<StoreFileHeader, 'applicationId' | 'userVersion' | 'schemaCookie'>;

function readFacts(db: Database.Database): FileFacts {
  return {
    applicationId: db.pragma('application_id', { simple: true }) as number,
    userVersion: readUserVersion(db),
    schemaCookie: db.pragma('schema_version', { simple: true }) as number,
  };
}

/** Asks SQLite through a readonly connection, for files whose `-wal` may be ahead of the header. */
function probeWithSqlite(file: string, busyTimeoutMs: number): FileFacts {
  let probe: Database.Database | undefined;
  try {
    probe = new Database(file, { readonly: true, fileMustExist: true, timeout: busyTimeoutMs });
    return readFacts(probe);
  } catch (error) {
    throw toStoreError(error, { file, busyTimeoutMs });
  } finally {
    probe?.close();
  }
}

/**
 * Refuses, before anything writes to it, a file that belongs to another application, that a
 * newer release wrote, or that a readonly open cannot use without migrating.
 */
function checkFileFacts(file: string, facts: FileFacts, readonly: boolean): void {
  const { applicationId, userVersion, schemaCookie } = facts;
  const blank = applicationId === 0 && userVersion === 0 && schemaCookie === 0;
  if (applicationId !== COLLOQUY_APPLICATION_ID && !blank) {
    throw new ColloquyError(
      'INVALID_ARGUMENT',
      `${file} is an SQLite database of another application (application_id ${applicationId}), not a Colloquy ` +
        'store. It was left untouched; point `file` at a new path.',
      { file, applicationId },
    );
  }
  if (userVersion > SQLITE_SCHEMA_VERSION) {
    throw new ColloquyError(
      'STORE_VERSION',
      `The Colloquy store ${file} has schema version ${userVersion}, newer than the ${SQLITE_SCHEMA_VERSION} this ` +
        '@colloquy/store-sqlite understands. It was left untouched: upgrade @colloquy/store-sqlite to open it.',
      { file, fileVersion: userVersion, supportedVersion: SQLITE_SCHEMA_VERSION },
    );
  }
  if (readonly && userVersion < SQLITE_SCHEMA_VERSION) {
    throw new ColloquyError(
      'STORE_VERSION',
      `The Colloquy store ${file} has schema version ${userVersion} and needs migrating to ${SQLITE_SCHEMA_VERSION}, ` +
        'which a readonly open cannot do. Open it once without `readonly` to migrate it.',
      { file, fileVersion: userVersion, supportedVersion: SQLITE_SCHEMA_VERSION },
    );
  }
}

function validateOptions(options: SqliteStoreOptions, synchronous: string, busyTimeoutMs: number): void {
  if (typeof options.file !== 'string' || options.file.length === 0) {
    throw new ColloquyError(
      'INVALID_ARGUMENT',
      'openSqliteStore needs `file`: a path to the database file.',
      {},
    );
  }
  if (synchronous !== 'NORMAL' && synchronous !== 'FULL') {
    throw new ColloquyError(
      'INVALID_ARGUMENT',
      `\`synchronous\` must be 'NORMAL' or 'FULL', got ${JSON.stringify(synchronous)}.`,
      { synchronous },
    );
  }
  const pages = options.walAutocheckpointPages;
  if (pages !== undefined && (!Number.isInteger(pages) || pages < 0)) {
    throw new ColloquyError(
      'INVALID_ARGUMENT',
      `\`walAutocheckpointPages\` must be a whole number of pages >= 0, got ${String(pages)}.`,
      { walAutocheckpointPages: pages },
    );
  }
  if (!Number.isInteger(busyTimeoutMs) || busyTimeoutMs < 0) {
    throw new ColloquyError(
      'INVALID_ARGUMENT',
      `\`busyTimeoutMs\` must be a whole number of milliseconds >= 0, got ${String(busyTimeoutMs)}.`,
      { busyTimeoutMs },
    );
  }
}
