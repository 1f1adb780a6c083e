import { ColloquyError, isColloquyError } from '@colloquy/core';

/** The shape of errors thrown by better-sqlite3 (`SqliteError`): a message and an `SQLITE_*` code. */
interface SqliteErrorLike {
  message: string;
  code: string;
}

/** True for an error raised by SQLite itself (its `code` starts with `SQLITE_`). */
export function isSqliteError(error: unknown): error is SqliteErrorLike {
  if (!(error instanceof Error)) return false;
  const code: unknown = (error as { code?: unknown }).code;
  return typeof code === 'string' && code.startsWith('SQLITE_');
}

/** The `SQLITE_*` code of `error`, or undefined for errors that are not SQLite's. */
export function sqliteCode(error: unknown): string | undefined {
  return isSqliteError(error) ? error.code : undefined;
}

/** True for SQLite codes that mean the file is damaged or is not a database. */
export function isCorruptionCode(code: string | undefined): boolean {
  return code !== undefined && (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB');
}

/** True for SQLite codes that mean another connection holds a lock we waited for in vain. */
export function isLockCode(code: string | undefined): boolean {
  return code !== undefined && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

/** Context for {@link toStoreError}: which file, and how long we waited on locks. */
export interface StoreErrorContext {
  file: string;
  busyTimeoutMs: number;
}

/**
 * Maps anything thrown while talking to SQLite onto the `ColloquyError` family:
 * `STORE_CORRUPT` for a damaged file, `STORE_LOCKED` for a busy one, `STORE_ERROR` otherwise (with
 * `details.reason` `'disk-full'` when the disk is full).
 * Colloquy errors pass through unchanged.
 */
export function toStoreError(error: unknown, context: StoreErrorContext): ColloquyError {
  if (isColloquyError(error)) return error;
  const code = sqliteCode(error);
  const reason = error instanceof Error ? error.message : String(error);
  if (isCorruptionCode(code)) return corruptStoreError(context.file, reason, error);
  if (isLockCode(code)) {
    return new ColloquyError(
      'STORE_LOCKED',
      `The Colloquy store ${context.file} is locked by another connection (waited ${context.busyTimeoutMs} ms: ${reason}). ` +
        'Only one process may write to a store at a time: stop the other process using this file, or raise busyTimeoutMs.',
      { file: context.file, sqliteCode: code, busyTimeoutMs: context.busyTimeoutMs },
      { cause: error },
    );
  }
  if (code === 'SQLITE_FULL') {
    return new ColloquyError(
      'STORE_ERROR',
      `The disk holding the Colloquy store ${context.file} is full (${reason}); the write was rolled back. ` +
        'Free space on that disk. With `diskSpace` on, the store takes writes again by itself once there is room.',
      { file: context.file, sqliteCode: code, reason: 'disk-full' },
      { cause: error },
    );
  }
  if (code === 'SQLITE_READONLY') {
    return new ColloquyError(
      'STORE_ERROR',
      `The Colloquy store ${context.file} refused a write: ${reason}. ` +
        'Open it without `readonly`, and check the file and its directory are writable.',
      { file: context.file, sqliteCode: code },
      { cause: error },
    );
  }
  return new ColloquyError(
    'STORE_ERROR',
    `The Colloquy store ${context.file} failed: ${reason}.`,
    { file: context.file, ...(code === undefined ? {} : { sqliteCode: code }) },
    { cause: error },
  );
}

/** The error for a file that is damaged or is not an SQLite database at all. */
export function corruptStoreError(file: string, reason: string, cause?: unknown): ColloquyError {
  return new ColloquyError(
    'STORE_CORRUPT',
    `The Colloquy store ${file} is not a readable SQLite database (${reason}). ` +
      'It was left untouched: restore it from a backup, or point `file` at a new path.',
    { file, reason },
    cause === undefined ? undefined : { cause },
  );
}

/** The `STORE_ERROR` every call of a closed store throws. */
export function closedStoreError(file: string): ColloquyError {
  return new ColloquyError(
    'STORE_ERROR',
    `The store ${file} is closed; open it again with openSqliteStore.`,
    {
      file,
    },
  );
}

/** The `SESSION_NOT_FOUND` for a write to a session that does not exist. */
export function sessionNotFound(key: string): ColloquyError {
  return new ColloquyError('SESSION_NOT_FOUND', `No session "${key}".`, { key });
}
