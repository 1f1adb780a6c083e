import type { RunRecord, RunStatus } from '@colloquy/core/gateway';
import {
  RUN_COLUMN_FIELDS,
  RUN_INDEXED_FIELDS,
  type RunColumnField,
  type RunPatch,
  restoreRunColumns,
  type StoredRun,
  serializeRecord,
  splitRunMeta,
} from '@colloquy/core/store';

// Since schema 9 a run's status, times, attempts and delivery state live in columns of their own
// (split as @colloquy/core/store's `storedRun` splits them, as SQLite does); this module binds them
// to PostgreSQL's statements and functions.

/** Every column field with its column, in the order statements name them. */
const COLUMNS = Object.entries({ ...RUN_INDEXED_FIELDS, ...RUN_COLUMN_FIELDS }) as [RunColumnField, string][];

/**
 * The columns a run is read from (see {@link RunRow}). The delivery columns come as text, so a stored
 * JSON `null` reads apart from an absent field (the driver would parse both to `null`).
 */
export const RUN_READ_COLUMNS =
  'record, status, updated_at, started_at, ended_at, attempts, pending_delivery::text AS pending_delivery, delivery::text AS delivery';

/**
 * A run row as read through {@link RUN_READ_COLUMNS}: bigints come as text (as numbers when a function
 * returns the row as JSON).
 */
export interface RunRow {
  record: RunRecord;
  status: RunStatus;
  updated_at: string | number | null;
  started_at: string | number | null;
  ended_at: string | number | null;
  attempts: number | null;
  pending_delivery: string | null;
  delivery: string | null;
}

/** The run a row holds: the record's JSON with the fields of the columns put back. */
export function runFromRow(row: RunRow): RunRecord {
  return restoreRunColumns(row.record, {
    status: row.status,
    updatedAt: row.updated_at === null ? null : Number(row.updated_at),
    startedAt: row.started_at === null ? null : Number(row.started_at),
    endedAt: row.ended_at === null ? null : Number(row.ended_at),
    attempts: row.attempts,
    pendingDelivery: row.pending_delivery,
    delivery: row.delivery,
  });
}

/** The values of `runs`' columns in the order {@link INSERT_RUN} names them. */
export function runValues(run: StoredRun): unknown[] {
  return [
    run.runId,
    run.sessionKey,
    run.spawnedBy,
    run.status,
    run.createdAt,
    run.updatedAt,
    run.startedAt,
    run.endedAt,
    run.attempts,
    run.pendingDelivery,
    run.delivery,
    run.json,
  ];
}

/** Inserts a run from {@link runValues} unless its id is stored. */
export const INSERT_RUN = `INSERT INTO runs (run_id, session_key, spawned_by, status, created_at, updated_at,
    started_at, ended_at, attempts, pending_delivery, delivery, record)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) ON CONFLICT (run_id) DO NOTHING`;

/**
 * Runs as the SQL functions of schema 9 take them: one array per column, in the order of their
 * parameters (`run_ids` to `run_records`).
 */
export function runArrays(runs: readonly StoredRun[]): unknown[][] {
  return [
    runs.map((run) => run.runId),
    runs.map((run) => run.sessionKey),
    runs.map((run) => run.spawnedBy),
    runs.map((run) => run.createdAt),
    runs.map((run) => run.status),
    runs.map((run) => run.updatedAt),
    runs.map((run) => run.startedAt),
    runs.map((run) => run.endedAt),
    runs.map((run) => run.attempts),
    runs.map((run) => run.pendingDelivery),
    runs.map((run) => run.delivery),
    runs.map((run) => run.json),
  ];
}

/** A run patch split as it is written: column by column, and the JSON of its other fields. */
export interface RunPatchColumns {
  /** The column fields it sets (`undefined` ones left out). */
  columns: Partial<Pick<RunRecord, RunColumnField>>;
  /** Its `meta`'s delivery fields, as JSON or null, when it has a `meta` (which replaces the stored one). */
  meta?: { pendingDelivery: string | null; delivery: string | null };
  /** The JSON of the fields merged into the stored record (the indexed ones too), or null for none. */
  json: string | null;
}

/** Splits a run patch: `runId` and `undefined` fields are ignored. */
export function splitRunPatch(patch: RunPatch): RunPatchColumns {
  const columns: Record<string, unknown> = {};
  const json: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(patch)) {
    if (value === undefined || field === 'runId') continue;
    if (Object.hasOwn(RUN_COLUMN_FIELDS, field)) columns[field] = value;
    else {
      if (Object.hasOwn(RUN_INDEXED_FIELDS, field)) columns[field] = value;
      json[field] = value;
    }
  }
  let meta: RunPatchColumns['meta'];
  if (json.meta !== undefined) {
    const { pendingDelivery, delivery, rest } = splitRunMeta(json.meta);
    meta = { pendingDelivery, delivery };
    json.meta = rest;
  }
  return {
    columns: columns as RunPatchColumns['columns'],
    ...(meta ? { meta } : {}),
    json: Object.keys(json).length > 0 ? serializeRecord(json, 'run') : null,
  };
}

/**
 * Run patches as `colloquy_end_turn` (schema 9) takes them: one array per column (null where a patch
 * leaves it), in the order of its parameters (`run_ids` to `run_records`).
 */
export function runPatchArrays(patches: readonly { runId: string; patch: RunPatch }[]): unknown[][] {
  const split = patches.map(({ patch }) => splitRunPatch(patch));
  return [
    patches.map(({ runId }) => runId),
    ...COLUMNS.map(([field]) => split.map((patch) => patch.columns[field] ?? null)),
    split.map((patch) => patch.meta !== undefined),
    split.map((patch) => patch.meta?.pendingDelivery ?? null),
    split.map((patch) => patch.meta?.delivery ?? null),
    split.map((patch) => patch.json),
  ];
}

/**
 * An `UPDATE` of one run that sets only what `patch` names: the fields with a column by column, the
 * others merged into the record's JSON on the server (`colloquy_merge_json`; the stored JSON is not read
 * into JavaScript). A `meta` in the patch replaces the stored one, its delivery fields going to their
 * columns. The SET list follows a fixed order, so a patch's shape, not its key order, decides the text
 * (and so its prepared statement).
 *
 * @param patch - the patch (`runId` and `undefined` fields are ignored)
 * @returns the statement (`$1` is the run id; it returns {@link RUN_READ_COLUMNS}) and its values,
 *   or undefined when the patch changes nothing
 */
export function runUpdate(runId: string, patch: RunPatch): { text: string; values: unknown[] } | undefined {
  const split = splitRunPatch(patch);
  const sets: string[] = [];
  const values: unknown[] = [runId];
  const assign = (column: string, value: unknown, expression = (param: string) => param) => {
    values.push(value);
    sets.push(`${column} = ${expression(`$${values.length}`)}`);
  };
  for (const [field, column] of COLUMNS) {
    const value = split.columns[field];
    if (value !== undefined) assign(column, value);
  }
  if (split.meta) {
    assign('pending_delivery', split.meta.pendingDelivery, (param) => `${param}::json`);
    assign('delivery', split.meta.delivery, (param) => `${param}::json`);
  }
  if (split.json !== null) {
    assign('record', split.json, (param) => `colloquy_merge_json(record, ${param}::json)`);
  }
  if (sets.length === 0) return undefined;
  return {
    text: `UPDATE runs SET ${sets.join(', ')} WHERE run_id = $1 RETURNING ${RUN_READ_COLUMNS}`,
    values,
  };
}
