import { ColloquyError, type SessionRecord } from '@colloquy/core';
import {
  isPatchChange,
  type SessionListQuery,
  type SessionPatch,
  serializeRecord,
  sessionRow,
} from '@colloquy/core/store';
import { planSessionList } from '../session-list-plan.js';
import { sessionNotFound, sqliteCode } from '../sqlite-errors.js';
import type { DynamicStatements } from './dynamic-statements.js';
import type { SessionRow, Statements } from './statements.js';

// The session records. Writes run inside the engine's transaction; reads inside its guard. A
// session's `stateVersion` lives in the `state_version` column only: the record's JSON never holds it
// (a version bump then rewrites no JSON), and reads put it back.

/**
 * The session a row holds, with its `stateVersion` from the column (absent while 0, as a session
 * that never changed has none).
 */
export function sessionFromRow(row: SessionRow | undefined): SessionRecord | undefined {
  if (row === undefined) return undefined;
  const record = JSON.parse(row[0]) as SessionRecord;
  if (row[1] > 0) record.stateVersion = row[1];
  return record;
}

/** The record's JSON as stored: without `stateVersion`, which the column keeps. */
function sessionJson(record: SessionRecord): string {
  if (record.stateVersion === undefined) return serializeRecord(record, 'session');
  const { stateVersion: _column, ...rest } = record;
  return serializeRecord(rest, 'session');
}

/** Session fields with a column of their own besides `updated_at` (see `writeSession`). */
const SESSION_COLUMN_FIELDS = new Set<keyof SessionRecord>([
  'key',
  'sessionId',
  'agentId',
  'kind',
  'spawnedBy',
  'label',
  'archivedAt',
]);

/** The session stored under `key`, if any. */
export function getSession(s: Statements, key: string): SessionRecord | undefined {
  return sessionFromRow(s.sessionByKey.get(key));
}

/** Writes a whole session record; counts a `patch` change when a watched field changed. */
export function putSession(s: Statements, record: SessionRecord): void {
  const previous = sessionFromRow(s.sessionByKey.get(record.key));
  const json = sessionJson(record);
  // Rewriting every column would move the session's entry in every index, unchanged or not.
  if (previous !== undefined && sameColumns(previous, record)) {
    s.updateSessionRecord.run(record.updatedAt, json, record.key);
  } else writeSession(s, record, json);
  if (isPatchChange(previous, record)) notePatch(s, record.key);
}

/** Whether the fields with a column of their own, besides `updated_at`, are the same in both. */
function sameColumns(a: SessionRecord, b: SessionRecord): boolean {
  for (const field of SESSION_COLUMN_FIELDS) {
    if ((a[field] ?? null) !== (b[field] ?? null)) return false;
  }
  return true;
}

/**
 * Applies `patch` to the stored session (`null` removes a field) and returns the result.
 *
 * @throws `SESSION_NOT_FOUND` when there is no such session
 */
export function patchSession(s: Statements, key: string, patch: SessionPatch): SessionRecord {
  const row = s.sessionByKey.get(key);
  if (row === undefined) throw sessionNotFound(key);
  const written = writeSessionPatch(s, key, JSON.parse(row[0]) as SessionRecord, row[1], patch);
  return sessionFromRow([written.json, written.stateVersion])!;
}

/** A session record with `patch` merged in: `null` removes a field, `undefined` leaves it alone. */
export function mergeSessionPatch(record: SessionRecord, patch: SessionPatch): SessionRecord {
  // A shallow copy: fields the patch leaves alone keep their objects, so the change check of
  // `writeSessionPatch` compares them by identity.
  const next: Record<string, unknown> = { ...record };
  for (const [field, value] of Object.entries(patch)) {
    if (field === 'key' || field === 'stateVersion' || value === undefined) continue;
    if (value === null) delete next[field];
    else next[field] = value;
  }
  return next as unknown as SessionRecord;
}

/** What {@link writeSessionPatch} wrote. */
export interface WrittenSession {
  /** The merged record (without `stateVersion`); it shares the patch's values. */
  record: SessionRecord;
  /** The record's JSON as stored. */
  json: string;
  /** The session's state version after the write. */
  stateVersion: number;
}

/**
 * Merges `patch` into `before` (the stored session as parsed, at `stateVersion`) and writes it,
 * counting a `patch` change when a watched field changed.
 */
export function writeSessionPatch(
  s: Statements,
  key: string,
  before: SessionRecord,
  stateVersion: number,
  patch: SessionPatch,
): WrittenSession {
  const next = mergeSessionPatch(before, patch);
  const json = serializeRecord(next, 'session');
  if (
    typeof next.updatedAt !== 'number' ||
    Object.keys(patch).some((f) => SESSION_COLUMN_FIELDS.has(f as keyof SessionRecord))
  ) {
    writeSession(s, next, json);
  } else s.updateSessionRecord.run(next.updatedAt, json, key);
  const changed = isPatchChange(before, next, Object.keys(patch));
  const bumped = changed ? notePatch(s, key) : undefined;
  return { record: next, json, stateVersion: bumped ?? stateVersion };
}

/** Stores a session known not to exist yet (a new session is never a `patch` change). */
export function insertSession(s: Statements, record: SessionRecord): void {
  writeSession(s, record, sessionJson(record));
}

/**
 * Counts a `patch` change: bumps the version and logs its kind (the prune trigger bounds the log).
 * Returns the new version.
 */
function notePatch(s: Statements, key: string): number | undefined {
  const version = s.bumpVersion.get(key);
  if (version !== undefined) s.insertChange.run(key, version, 'patch');
  return version;
}

/** Deletes a session with its transcript, inbox, bindings, changes and watches. */
export function deleteSession(s: Statements, key: string): boolean {
  if (s.sessionExists.get(key) === undefined) return false;
  s.deleteMessages.run(key);
  s.deleteInbox.run(key);
  s.deleteBindingsOfSession.run(key);
  s.deleteChanges.run(key);
  s.deleteWatchesOf.run(key, key);
  s.deleteSession.run(key);
  return true;
}

/** The sessions matching `query`, as planned by `planSessionList`. */
export function listSessions(dynamic: DynamicStatements, query: SessionListQuery): SessionRecord[] {
  const [part] = planSessionList(query, 'rows', query.now ?? Date.now()).parts;
  if (part === undefined) return [];
  const rows = dynamic.get(part.sql).all(...part.params) as { record: string; state_version: number }[];
  return rows.map((row) => sessionFromRow([row.record, row.state_version])!);
}

/** How many sessions match `query`. */
export function countSessions(dynamic: DynamicStatements, query: SessionListQuery): number {
  const plan = planSessionList(query, 'count', query.now ?? Date.now());
  let total = 0;
  for (const part of plan.parts) {
    total += dynamic
      .get(part.sql)
      .pluck()
      .get(...part.params) as number;
  }
  return total;
}

function writeSession(s: Statements, record: SessionRecord, json: string): void {
  try {
    s.upsertSession.run(...sessionRow(record, json));
  } catch (error) {
    if (sqliteCode(error) === 'SQLITE_CONSTRAINT_UNIQUE') {
      throw new ColloquyError(
        'CONFLICT',
        `Session id "${record.sessionId}" already belongs to another session; give "${record.key}" a fresh sessionId.`,
        { key: record.key, sessionId: record.sessionId },
        { cause: error },
      );
    }
    throw error;
  }
}
