import { ColloquyError } from '@colloquy/core';
import {
  type InboxEntry,
  type OutboxEntry,
  type OutboxListQuery,
  outboxRow,
  serializeRecord,
} from '@colloquy/core/store';
import { sqlLimit } from '../session-list-plan.js';
import { type DynamicStatements, whereClause } from './dynamic-statements.js';
import { parseOptional, withoutUndefined } from './record-json.js';
import type { Statements } from './statements.js';

// The announce outbox (results on their way to the requester) and the session inbox.

// --- outbox ---

/** Stores a new outbox entry; false when one for that child run exists. */
export function putOutbox(s: Statements, entry: OutboxEntry): boolean {
  return s.insertOutbox.run(...outboxRow(entry, serializeRecord(entry, 'outbox entry'))).changes > 0;
}

/** The outbox entry of a child session's run, if any. */
export function getOutbox(s: Statements, childSessionKey: string, runId: string): OutboxEntry | undefined {
  return parseOptional<OutboxEntry>(s.outboxById.get(childSessionKey, runId));
}

/**
 * Applies `patch` to a stored outbox entry.
 *
 * @throws `STORE_ERROR` when there is no such entry
 */
export function updateOutbox(
  s: Statements,
  childSessionKey: string,
  runId: string,
  patch: Partial<Omit<OutboxEntry, 'childSessionKey' | 'runId'>>,
): OutboxEntry {
  const previous = s.outboxById.get(childSessionKey, runId);
  if (previous === undefined) {
    throw new ColloquyError('STORE_ERROR', `No outbox entry for run "${runId}" of "${childSessionKey}".`, {
      childSessionKey,
      runId,
    });
  }
  const next: OutboxEntry = {
    ...(JSON.parse(previous) as OutboxEntry),
    ...withoutUndefined(patch),
    childSessionKey,
    runId,
  };
  const json = serializeRecord(next, 'outbox entry');
  const [, , ...columns] = outboxRow(next, json);
  s.updateOutbox.run(...columns, childSessionKey, runId);
  return JSON.parse(json) as OutboxEntry;
}

/** The outbox entries matching `query` (by default the pending ones), oldest first. */
export function listOutbox(dynamic: DynamicStatements, query: OutboxListQuery): OutboxEntry[] {
  const statuses = query.statuses ?? ['pending'];
  const limit = sqlLimit(query.limit);
  if (statuses.length === 0 || limit === 0) return [];
  const filters = ['status IN (SELECT value FROM json_each(?))'];
  const params: unknown[] = [JSON.stringify(statuses)];
  if (query.requesterSessionKey !== undefined) {
    filters.push('requester_session_key = ?');
    params.push(query.requesterSessionKey);
  }
  if (query.dueBefore !== undefined) {
    filters.push('next_attempt_at <= ?');
    params.push(query.dueBefore);
  }
  const sql = `SELECT entry FROM outbox${whereClause(filters)} ORDER BY created_at, rowid LIMIT ?`;
  return dynamic
    .get(sql)
    .pluck()
    .all(...params, limit)
    .map((json) => JSON.parse(json as string) as OutboxEntry);
}

// --- inbox ---

/** Stores a new inbox entry; false when one with that id exists. */
export function putInbox(s: Statements, entry: InboxEntry): boolean {
  return (
    s.insertInbox.run(
      entry.sessionKey,
      entry.id,
      entry.createdAt,
      entry.consumedAt ?? null,
      serializeRecord(entry, 'inbox entry'),
    ).changes > 0
  );
}

/** A session's unconsumed inbox entries, oldest first. */
export function listInbox(s: Statements, sessionKey: string): InboxEntry[] {
  return s.inboxOf.all(sessionKey).map((json) => JSON.parse(json) as InboxEntry);
}

/** The keys of the sessions with unconsumed inbox entries, in key order. */
export function listInboxSessionKeys(s: Statements): string[] {
  return s.inboxSessionKeys.all();
}

/** Marks inbox entries consumed at `at` (entries already consumed keep their time). */
export function consumeInbox(s: Statements, sessionKey: string, ids: readonly string[], at: number): void {
  for (const id of ids) s.consumeInbox.run(at, at, sessionKey, id);
}
