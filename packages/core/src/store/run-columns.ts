import type { RunRecord, RunStatus } from '../interfaces/records.js';
import { serializeRecord } from './record-rows.js';

// How the SQL stores keep a run: its status, times, attempts and delivery state (`meta.pendingDelivery`,
// `meta.delivery`) in columns of their own, written by column on each change; a `record` JSON with
// the rest. Reads put the columns back where they were. SQLite and PostgreSQL share this split, so a
// run reads back the same from either.

/** The run fields kept in a column only (not in the record's JSON), with their column. */
export const RUN_COLUMN_FIELDS = {
  status: 'status',
  updatedAt: 'updated_at',
  startedAt: 'started_at',
  endedAt: 'ended_at',
  attempts: 'attempts',
} as const satisfies Partial<Record<keyof RunRecord, string>>;

/** The run fields with an indexed column that the record's JSON also holds. */
export const RUN_INDEXED_FIELDS = {
  sessionKey: 'session_key',
  spawnedBy: 'spawned_by',
  createdAt: 'created_at',
} as const satisfies Partial<Record<keyof RunRecord, string>>;

/** A run field with a column of its own. */
export type RunColumnField = keyof typeof RUN_COLUMN_FIELDS | keyof typeof RUN_INDEXED_FIELDS;

/** The values of a run's own columns as a SQL store writes and reads them. */
export interface RunColumnValues {
  status: RunStatus;
  updatedAt: number | null;
  startedAt: number | null;
  endedAt: number | null;
  attempts: number | null;
  /** `meta.pendingDelivery` as JSON text, or null when absent. */
  pendingDelivery: string | null;
  /** `meta.delivery` as JSON text, or null when absent. */
  delivery: string | null;
}

/** A run as a SQL store keeps it: the values of its columns, and the JSON of the rest. */
export interface StoredRun extends RunColumnValues {
  runId: string;
  sessionKey: string;
  spawnedBy: string | null;
  createdAt: number;
  /** The record without the fields kept in a column only. */
  json: string;
}

/**
 * Splits a run into its columns and the JSON of the rest.
 *
 * @throws `INVALID_ARGUMENT` when the run is not JSON-serialisable
 */
export function storedRun(run: RunRecord): StoredRun {
  const { status, updatedAt, startedAt, endedAt, attempts, meta, ...rest } = run;
  const delivery = meta === undefined ? undefined : splitRunMeta(meta);
  return {
    runId: run.runId,
    sessionKey: run.sessionKey,
    spawnedBy: run.spawnedBy ?? null,
    createdAt: run.createdAt,
    status,
    updatedAt: updatedAt ?? null,
    startedAt: startedAt ?? null,
    endedAt: endedAt ?? null,
    attempts: attempts ?? null,
    pendingDelivery: delivery?.pendingDelivery ?? null,
    delivery: delivery?.delivery ?? null,
    json: serializeRecord(delivery === undefined ? rest : { ...rest, meta: delivery.rest }, 'run'),
  };
}

/** A run's `meta` split by {@link splitRunMeta}. */
export interface SplitRunMeta {
  /** `pendingDelivery` as JSON, or null when absent. */
  pendingDelivery: string | null;
  /** `delivery` as JSON, or null when absent. */
  delivery: string | null;
  /** The other fields, kept in the record's JSON. */
  rest: unknown;
}

/**
 * Splits a run's `meta` into its delivery fields (as JSON) and the rest. A `meta` that is not an
 * object (nothing the runtime writes) has no delivery fields and is kept whole.
 *
 * @throws `INVALID_ARGUMENT` when a delivery field is not JSON-serialisable
 */
export function splitRunMeta(meta: unknown): SplitRunMeta {
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) {
    return { pendingDelivery: null, delivery: null, rest: meta };
  }
  const { pendingDelivery, delivery, ...rest } = meta as Record<string, unknown>;
  return {
    pendingDelivery: runDeliveryJson(pendingDelivery, 'planned delivery'),
    delivery: runDeliveryJson(delivery, 'delivery state'),
    rest,
  };
}

/**
 * A delivery field of a run's `meta` as its column's JSON, or null when absent.
 *
 * @param what - the field in words, for the error
 */
export function runDeliveryJson(value: unknown, what: string): string | null {
  return value === undefined ? null : serializeRecord(value, what);
}

/**
 * Puts a run's column values back into the record parsed from its JSON: the inverse of
 * {@link storedRun}.
 *
 * @param run - the record parsed from the `record` JSON; it is changed in place
 * @returns the same record, whole
 */
export function restoreRunColumns(run: RunRecord, columns: RunColumnValues): RunRecord {
  run.status = columns.status;
  if (columns.updatedAt !== null) run.updatedAt = columns.updatedAt;
  if (columns.startedAt !== null) run.startedAt = columns.startedAt;
  if (columns.endedAt !== null) run.endedAt = columns.endedAt;
  if (columns.attempts !== null) run.attempts = columns.attempts;
  if (columns.pendingDelivery !== null || columns.delivery !== null) {
    const meta: Record<string, unknown> = { ...run.meta };
    if (columns.pendingDelivery !== null) meta.pendingDelivery = JSON.parse(columns.pendingDelivery);
    if (columns.delivery !== null) meta.delivery = JSON.parse(columns.delivery);
    run.meta = meta;
  }
  return run;
}
