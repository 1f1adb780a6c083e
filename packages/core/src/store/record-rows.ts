import { ColloquyError } from '../errors/colloquy-error.js';
import type { McpTokenRecord, OutboxEntry, PairingRecord, SessionRecord } from '../interfaces/records.js';

/** A value a SQL driver binds as a parameter. */
export type SqlValue = string | number | null;

/**
 * A record as the JSON of a SQL store's `record` column.
 *
 * @param value - the record
 * @param what - its kind in words, for the error (`session`, `run`, `outbox entry`...)
 * @returns the JSON text
 * @throws `INVALID_ARGUMENT` when the value is not JSON-serialisable (a cycle, a BigInt)
 */
export function serializeRecord(value: unknown, what: string): string {
  try {
    return JSON.stringify(value);
  } catch (error) {
    throw new ColloquyError(
      'INVALID_ARGUMENT',
      `The ${what} cannot be stored because it is not JSON-serialisable (${(error as Error).message}); ` +
        'keep records to plain objects, arrays, strings, numbers and booleans.',
      {},
      { cause: error },
    );
  }
}

// The row helpers below give the columns of the SQL stores' tables in their schema order, so SQLite
// and PostgreSQL bind the same values from a record: the indexed columns, then the record's JSON.

/** `sessions`: key, session_id, agent_id, kind, updated_at, spawned_by, label, archived_at, record. */
export function sessionRow(record: SessionRecord, json: string): SqlValue[] {
  return [
    record.key,
    record.sessionId,
    record.agentId,
    record.kind,
    record.updatedAt,
    record.spawnedBy ?? null,
    record.label ?? null,
    record.archivedAt ?? null,
    json,
  ];
}

/** `outbox`: child_session_key, run_id, requester_session_key, status, next_attempt_at, created_at, entry. */
export function outboxRow(entry: OutboxEntry, json: string): SqlValue[] {
  return [
    entry.childSessionKey,
    entry.runId,
    entry.requesterSessionKey,
    entry.status,
    entry.nextAttemptAt,
    entry.createdAt,
    json,
  ];
}

/** `pairings`: channel, account_id, peer_id, status, code (only while pending), created_at, record. */
export function pairingRow(record: PairingRecord, json: string): SqlValue[] {
  return [
    record.channel,
    record.accountId,
    record.peerId,
    record.status,
    record.status === 'pending' ? (record.code ?? null) : null,
    record.createdAt,
    json,
  ];
}

/** `mcp_tokens`: id, hash, agent_id, created_at, revoked_at, record. */
export function mcpTokenRow(record: McpTokenRecord, json: string): SqlValue[] {
  return [record.id, record.hash, record.agentId, record.createdAt, record.revokedAt ?? null, json];
}
