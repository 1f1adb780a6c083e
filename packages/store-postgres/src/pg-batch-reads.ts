import type { StoredMessage } from '@colloquy/core';
import type { RunRecord } from '@colloquy/core/gateway';
import { type MessageRow, type Queryable, storedMessage } from './pg-operations.js';
import { RUN_READ_COLUMNS, type RunRow, runFromRow } from './run-columns.js';
import { sqlLimit } from './session-list-sql.js';

// The batched reads on PostgreSQL: each is ONE statement, a lateral join over the keys (one index
// walk per key, `runs_by_session` or the transcript's primary key, each stopping after `limit` rows),
// so many sessions cost one round trip. `WITH ORDINALITY` numbers the keys, so each row goes back
// to the key it was read for, a key given twice included.

/** The newest `$2` runs of each key of `$1`, in `listRuns` order within a key. */
const RUNS_OF_SESSIONS = `SELECT k.i, r.*
  FROM unnest($1::text[]) WITH ORDINALITY AS k(key, i)
  CROSS JOIN LATERAL (
    SELECT ${RUN_READ_COLUMNS}, created_at, run_id FROM runs WHERE session_key = k.key
    ORDER BY created_at DESC, run_id DESC LIMIT $2
  ) AS r
  ORDER BY k.i, r.created_at DESC, r.run_id DESC`;

/** The last `$2` messages of each key of `$1`, oldest first within a key. */
const TAILS = `SELECT k.i, m.seq, m.message, m.platform_message_id
  FROM unnest($1::text[]) WITH ORDINALITY AS k(key, i)
  CROSS JOIN LATERAL (
    SELECT seq, message, platform_message_id FROM messages WHERE session_key = k.key
    ORDER BY seq DESC LIMIT $2
  ) AS m
  ORDER BY k.i, m.seq`;

/** A row of a batched read: the 1-based position of its key (a bigint as text) and the row. */
type Numbered<R> = R & { i: string };

/**
 * Runs a batched read (`$1` the keys, `$2` the limit per key, or null for none) and groups its rows
 * by key: entry `i` for `sessionKeys[i]`.
 */
async function readPerKey<R extends object, T>(
  db: Queryable,
  sql: string,
  sessionKeys: readonly string[],
  limit: number,
  toItem: (row: Numbered<R>) => T,
): Promise<T[][]> {
  const out = sessionKeys.map((): T[] => []);
  const count = sqlLimit(limit);
  if (out.length === 0 || count === 0) return out;
  const { rows } = await db.query<Numbered<R>>(sql, [[...sessionKeys], count < 0 ? null : count]);
  for (const row of rows) out[Number(row.i) - 1]!.push(toItem(row));
  return out;
}

/**
 * `BatchReads.listRunsOfSessions` in one statement.
 *
 * @param db - the pool, or the client of an open transaction
 */
export function listRunsOfSessions(
  db: Queryable,
  sessionKeys: readonly string[],
  limit: number,
): Promise<RunRecord[][]> {
  return readPerKey<RunRow, RunRecord>(db, RUNS_OF_SESSIONS, sessionKeys, limit, runFromRow);
}

/**
 * `BatchReads.readTails` in one statement.
 *
 * @param db - the pool, or the client of an open transaction
 */
export function readTails(
  db: Queryable,
  sessionKeys: readonly string[],
  limit: number,
): Promise<StoredMessage[][]> {
  return readPerKey<MessageRow, StoredMessage>(db, TAILS, sessionKeys, limit, storedMessage);
}
