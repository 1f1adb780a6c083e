import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { ColloquyError, type Logger, silentLogger } from '@colloquy/core';
import Database from 'better-sqlite3';
import { inspectStoreFile } from './file-header.js';
import { COLLOQUY_APPLICATION_ID, migrate, readUserVersion, SQLITE_SCHEMA_VERSION } from './migrations.js';
import { toStoreError } from './sqlite-errors.js';
import { SqliteStore, type SqliteSynchronous } from './sqlite-store.js';

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
  /** Receives migration and maintenance messages (default: silent). */
  logger?: Logger;
}

const MEMORY = ':memory:';

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
  const context = { file, busyTimeoutMs };

  if (file !== MEMORY) {
    const state = inspectStoreFile(file);
    if (state === 'sqlite') probeExistingFile(file, busyTimeoutMs, readonly);
    else if (readonly) {
      throw new ColloquyError(
        'STORE_ERROR',
        `There is no Colloquy store at ${file} to open readonly; open it once without \`readonly\` to create it.`,
        { file },
      );
    } else mkdirSync(dirname(file), { recursive: true });
  }

  let db: Database.Database | undefined;
  try {
    db = new Database(file, { readonly, fileMustExist: readonly, timeout: busyTimeoutMs });
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
    return new SqliteStore({ db, file, readonly, synchronous, busyTimeoutMs, schemaVersion, logger });
  } catch (error) {
    db?.close();
    throw toStoreError(error, context);
  }
}

/**
 * Opens an existing file readonly to check, before anything may write to it, that it is a
 * readable SQLite database, that it is a Colloquy store (or an empty database), and that its
 * schema is not newer than ours.
 */
function probeExistingFile(file: string, busyTimeoutMs: number, readonly: boolean): void {
  let probe: Database.Database | undefined;
  try {
    probe = new Database(file, { readonly: true, fileMustExist: true, timeout: busyTimeoutMs });
    const applicationId = probe.pragma('application_id', { simple: true }) as number;
    const version = readUserVersion(probe);
    const objects = probe.prepare('SELECT count(*) FROM sqlite_schema').pluck().get() as number;
    if (applicationId !== COLLOQUY_APPLICATION_ID && (applicationId !== 0 || version !== 0 || objects > 0)) {
      throw new ColloquyError(
        'INVALID_ARGUMENT',
        `${file} is an SQLite database of another application (application_id ${applicationId}, ` +
          `${objects} schema objects), not a Colloquy store. It was left untouched; point \`file\` at a new path.`,
        { file, applicationId },
      );
    }
    if (version > SQLITE_SCHEMA_VERSION) {
      throw new ColloquyError(
        'STORE_VERSION',
        `The Colloquy store ${file} has schema version ${version}, newer than the ${SQLITE_SCHEMA_VERSION} this ` +
          '@colloquy/store-sqlite understands. It was left untouched: upgrade @colloquy/store-sqlite to open it.',
        { file, fileVersion: version, supportedVersion: SQLITE_SCHEMA_VERSION },
      );
    }
    if (readonly && version < SQLITE_SCHEMA_VERSION) {
      throw new ColloquyError(
        'STORE_VERSION',
        `The Colloquy store ${file} has schema version ${version} and needs migrating to ${SQLITE_SCHEMA_VERSION}, ` +
          'which a readonly open cannot do. Open it once without `readonly` to migrate it.',
        { file, fileVersion: version, supportedVersion: SQLITE_SCHEMA_VERSION },
      );
    }
  } catch (error) {
    throw toStoreError(error, { file, busyTimeoutMs });
  } finally {
    probe?.close();
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
  if (!Number.isInteger(busyTimeoutMs) || busyTimeoutMs < 0) {
    throw new ColloquyError(
      'INVALID_ARGUMENT',
      `\`busyTimeoutMs\` must be a whole number of milliseconds >= 0, got ${String(busyTimeoutMs)}.`,
      { busyTimeoutMs },
    );
  }
}
