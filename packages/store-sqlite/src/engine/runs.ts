import { ColloquyError } from '@colloquy/core';
import type { RunRecord, RunStatus } from '@colloquy/core/gateway';
import { type RunListQuery, runRow, serializeRecord } from '@colloquy/core/store';
import { sqlLimit } from '../session-list-plan.js';
import { type DynamicStatements, whereClause } from './dynamic-statements.js';
import { parseOptional, withoutUndefined } from './record-json.js';
import type { Statements } from './statements.js';

// The run records.

/** The statuses `runs_active` (migration 8) indexes, and its condition as written there. */
const ACTIVE_STATUSES: ReadonlySet<RunStatus> = new Set<RunStatus>(['queued', 'running']);
const ACTIVE_RUNS_CONDITION = "status IN ('queued', 'running')";

/**
 * Stores a new run.
 *
 * @throws `CONFLICT` when a run with that id exists
 */
export function createRun(s: Statements, run: RunRecord): void {
  const inserted = s.insertRun.run(...runRow(run, serializeRecord(run, 'run'))).changes > 0;
  if (!inserted) {
    throw new ColloquyError('CONFLICT', `Run "${run.runId}" already exists; run ids must be unique.`, {
      runId: run.runId,
    });
  }
}

/** The run with that id, if any. */
export function getRun(s: Statements, runId: string): RunRecord | undefined {
  return parseOptional<RunRecord>(s.runById.get(runId));
}

/**
 * Applies `patch` to a stored run, setting only the columns that changed.
 *
 * @throws `RUN_NOT_FOUND` when there is no such run
 */
export function updateRun(s: Statements, runId: string, patch: Partial<Omit<RunRecord, 'runId'>>): RunRecord {
  const previous = s.runById.get(runId);
  if (previous === undefined) throw new ColloquyError('RUN_NOT_FOUND', `No run "${runId}".`, { runId });
  const before = JSON.parse(previous) as RunRecord;
  const next: RunRecord = { ...before, ...withoutUndefined(patch), runId };
  const json = serializeRecord(next, 'run');
  if (
    next.sessionKey !== before.sessionKey ||
    (next.spawnedBy ?? null) !== (before.spawnedBy ?? null) ||
    next.createdAt !== before.createdAt
  ) {
    const [, ...columns] = runRow(next, json);
    s.updateRun.run(...columns, runId);
  } else if (next.status !== before.status) s.updateRunStatus.run(next.status, json, runId);
  else s.updateRunRecord.run(json, runId);
  return JSON.parse(json) as RunRecord;
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
  const sql = `SELECT record FROM ${from}${whereClause(filters)} ORDER BY created_at DESC, run_id DESC LIMIT ?`;
  return dynamic
    .get(sql)
    .pluck()
    .all(...params, limit)
    .map((json) => JSON.parse(json as string) as RunRecord);
}
