import type Database from 'better-sqlite3';

// File maintenance: integrity check and WAL checkpoint.

/** The result of {@link SqliteStore.integrityCheck}. */
export interface IntegrityReport {
  /** True when SQLite found no problem in the file and no dangling transcript rows. */
  ok: boolean;
  /** What SQLite reported, one line per problem (empty when `ok`). */
  problems: string[];
}

/** The result of {@link SqliteStore.checkpoint}. */
export interface CheckpointResult {
  /** True when a reader kept the checkpoint from finishing (try again later). */
  busy: boolean;
  /** Frames in the write-ahead log before the checkpoint. */
  walFrames: number;
  /** Frames copied into the database file. */
  checkpointedFrames: number;
}

/** Runs `PRAGMA integrity_check` and `PRAGMA foreign_key_check`; see `SqliteEngine.integrityCheck`. */
export function integrityCheck(db: Database.Database): IntegrityReport {
  const problems = (db.pragma('integrity_check') as { integrity_check: string }[])
    .map((row) => row.integrity_check)
    .filter((line) => line !== 'ok');
  for (const row of db.pragma('foreign_key_check') as { table: string; rowid: number | null }[]) {
    problems.push(`foreign key violation in ${row.table} (rowid ${String(row.rowid)})`);
  }
  return { ok: problems.length === 0, problems };
}

/**
 * Runs `PRAGMA wal_checkpoint(TRUNCATE)` (see `SqliteEngine.checkpoint`) or `(PASSIVE)` (see
 * `SqliteEngine.startLogOver`).
 */
export function walCheckpoint(db: Database.Database, mode: 'TRUNCATE' | 'PASSIVE'): CheckpointResult {
  const [row] = db.pragma(`wal_checkpoint(${mode})`) as {
    busy: number;
    log: number;
    checkpointed: number;
  }[];
  return { busy: row?.busy === 1, walFrames: row?.log ?? 0, checkpointedFrames: row?.checkpointed ?? 0 };
}
