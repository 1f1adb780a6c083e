import { ColloquyError } from '@colloquy/core';
import type { RunRecord, RunStatus } from '@colloquy/core/gateway';
import {
  RUN_COLUMN_FIELDS,
  RUN_INDEXED_FIELDS,
  type RunListQuery,
  type RunPatch,
  restoreRunColumns,
  runDeliveryJson,
  serializeRecord,
  splitRunMeta,
  storedRun,
} from '@colloquy/core/store';
import { sqlLimit } from '../session-list-plan.js';
import { type DynamicStatements, whereClause } from './dynamic-statements.js';
import type { Statements } from './statements.js';

// The run records. Since migration 12 a run's status, times, attempts and delivery state live in
// columns of their own (split as @colloquy/core/store's `storedRun` splits them, as PostgreSQL
// does), written by column on each change; the `record` JSON holds the rest.

/** The statuses `runs_active` (migration 8) indexes, and its condition as written there. */
const ACTIVE_STATUSES: ReadonlySet<RunStatus> = new Set<RunStatus>(['queued', 'running']);
const ACTIVE_RUNS_CONDITION = "status IN ('queued', 'running')";

/** The columns a run is read from, in the order of {@link RunRow}. */
export const RUN_READ_COLUMNS =
  'record, status, updated_at, started_at, ended_at, attempts, pending_delivery, delivery';

/** A run row as read (see {@link RUN_READ_COLUMNS}). */
export type RunRow = [
  record: string,
  status: RunStatus,
  updatedAt: number | null,
  startedAt: number | null,
  endedAt: number | null,
  attempts: number | null,
  pendingDelivery: string | null,
  delivery: string | null,
];

/** The run a row holds: the record's JSON with the fields of the columns put back. */
export function runFromRow(row: RunRow): RunRecord {
  const [json, status, updatedAt, startedAt, endedAt, attempts, pendingDelivery, delivery] = row;
  return restoreRunColumns(JSON.parse(json) as RunRecord, {
    status,
    updatedAt,
    startedAt,
    endedAt,
    attempts,
    pendingDelivery,
    delivery,
  });
}

/**
 * Stores a new run.
 *
 * @throws `CONFLICT` when a run with that id exists
 */
export function createRun(s: Statements, run: RunRecord): void {
  const stored = storedRun(run);
  const inserted =
    s.insertRun.run(
      stored.runId,
      stored.sessionKey,
      stored.spawnedBy,
      stored.status,
      stored.createdAt,
      stored.updatedAt,
      stored.startedAt,
      stored.endedAt,
      stored.attempts,
      stored.pendingDelivery,
      stored.delivery,
      stored.json,
    ).changes > 0;
  if (!inserted) {
    throw new ColloquyError('CONFLICT', `Run "${run.runId}" already exists; run ids must be unique.`, {
      runId: run.runId,
    });
  }
}

/** The run with that id, if any. */
export function getRun(s: Statements, runId: string): RunRecord | undefined {
  const row = s.runById.get(runId);
  return row === undefined ? undefined : runFromRow(row);
}

/** A JSON path naming one top-level field of a record. */
function fieldPath(field: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(field) ? `$.${field}` : `$."${field}"`;
}

/** Delivery fields of a run's `meta` to set by column alone, the rest of the stored `meta` kept. */
export interface DeliveryColumns {
  /** `meta.pendingDelivery`, when set. */
  pendingDelivery?: unknown;
  /** `meta.delivery`, when set. */
  delivery?: unknown;
}

/**
 * Applies `patch` to a stored run in one statement, setting only what the patch names: the fields
 * with a column by column, the others in the record's JSON (`json_set`, so the rest of the JSON is
 * not read into JavaScript). A `meta` in the patch replaces the stored one, its delivery fields
 * going to their columns. Returns the run as stored.
 *
 * @param delivery - delivery fields set by column besides a patch without `meta`
 * @throws `RUN_NOT_FOUND` when there is no such run
 */
export function updateRun(
  s: Statements,
  dynamic: DynamicStatements,
  runId: string,
  patch: RunPatch,
  delivery: DeliveryColumns = {},
): RunRecord {
  const sets: string[] = [];
  const params: unknown[] = [];
  const paths: string[] = [];
  const values: unknown[] = [];
  const setJson = (field: string, value: unknown) => {
    if (typeof value === 'string' || typeof value === 'number') {
      paths.push(`?, ?`);
      values.push(fieldPath(field), value);
    } else {
      paths.push(`?, json(?)`);
      values.push(fieldPath(field), serializeRecord(value, 'run'));
    }
  };
  for (const field of Object.keys(patch)) {
    const value = patch[field as keyof RunPatch];
    // A run's id is its key: a patch never moves it.
    if (value === undefined || field === 'runId') continue;
    if (Object.hasOwn(RUN_COLUMN_FIELDS, field)) {
      sets.push(`${RUN_COLUMN_FIELDS[field as keyof typeof RUN_COLUMN_FIELDS]} = ?`);
      params.push(value);
    } else if (field === 'meta') {
      const { pendingDelivery, delivery, rest } = splitRunMeta(value);
      sets.push('pending_delivery = ?', 'delivery = ?');
      params.push(pendingDelivery, delivery);
      setJson('meta', rest);
    } else {
      if (Object.hasOwn(RUN_INDEXED_FIELDS, field)) {
        sets.push(`${RUN_INDEXED_FIELDS[field as keyof typeof RUN_INDEXED_FIELDS]} = ?`);
        params.push(value);
      }
      setJson(field, value);
    }
  }
  if (delivery.pendingDelivery !== undefined) {
    sets.push('pending_delivery = ?');
    params.push(runDeliveryJson(delivery.pendingDelivery, 'planned delivery'));
  }
  if (delivery.delivery !== undefined) {
    sets.push('delivery = ?');
    params.push(runDeliveryJson(delivery.delivery, 'delivery state'));
  }
  if (paths.length > 0) {
    sets.push(`record = json_set(record, ${paths.join(', ')})`);
    params.push(...values);
  }
  const row =
    sets.length === 0
      ? s.runById.get(runId)
      : (dynamic
          .get(`UPDATE runs SET ${sets.join(', ')} WHERE run_id = ? RETURNING ${RUN_READ_COLUMNS}`)
          .raw()
          .get(...params, runId) as RunRow | undefined);
  if (row === undefined) throw runNotFound(runId);
  return runFromRow(row);
}

/** The error of an update of a run that does not exist. */
export function runNotFound(runId: string): ColloquyError {
  return new ColloquyError('RUN_NOT_FOUND', `No run "${runId}".`, { runId });
}

/** The runs matching `query`, newest first. */
export function listRuns(dynamic: DynamicStatements, query: RunListQuery): RunRecord[] {
  if (query.statuses?.length === 0) return [];
  const limit = sqlLimit(query.limit);
  if (limit === 0) return [];
  const filters: string[] = [];
  const params: unknown[] = [];
  if (query.sessionKey !== undefined) {
    filters.push('session_key = ?');
    params.push(query.sessionKey);
  }
  if (query.spawnedBy !== undefined) {
    filters.push('spawned_by = ?');
    params.push(query.spawnedBy);
  }
  if (query.statuses !== undefined) {
    filters.push('status IN (SELECT value FROM json_each(?))');
    params.push(JSON.stringify(query.statuses));
  }
  // Queued and running runs are few whatever the store's size, and `runs_active` holds only them: a
  // walk of it beats a session's whole history. The term repeats the index's condition word for word,
  // which is how SQLite knows the partial index may answer.
  const activeOnly = query.statuses?.every((status) => ACTIVE_STATUSES.has(status)) === true;
  if (activeOnly) filters.push(ACTIVE_RUNS_CONDITION);
  const from = activeOnly ? 'runs INDEXED BY runs_active' : 'runs';
  const sql = `SELECT ${RUN_READ_COLUMNS} FROM ${from}${whereClause(filters)} ORDER BY created_at DESC, run_id DESC LIMIT ?`;
  return (
    dynamic
      .get(sql)
      .raw()
      .all(...params, limit) as RunRow[]
  ).map(runFromRow);
}
