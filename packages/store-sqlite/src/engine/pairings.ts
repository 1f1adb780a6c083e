import { ColloquyError } from '@colloquy/core';
import type { PairingRecord } from '@colloquy/core/gateway';
import { type PairingListQuery, pairingRow, serializeRecord } from '@colloquy/core/store';
import { sqliteCode } from '../sqlite-errors.js';
import { type DynamicStatements, whereClause } from './dynamic-statements.js';
import { parseOptional } from './record-json.js';
import type { Statements } from './statements.js';

// The pairings of chat peers (pending codes and their approvals).

/**
 * Stores a pairing, replacing the peer's earlier one.
 *
 * @throws `CONFLICT` when its pending code is already pending for another peer
 */
export function putPairing(s: Statements, record: PairingRecord): void {
  try {
    s.upsertPairing.run(...pairingRow(record, serializeRecord(record, 'pairing')));
  } catch (error) {
    if (sqliteCode(error) === 'SQLITE_CONSTRAINT_UNIQUE') {
      throw new ColloquyError(
        'CONFLICT',
        `The ${record.channel} pairing code "${record.code}" is already pending for another peer; issue a new code.`,
        { channel: record.channel, code: record.code },
        { cause: error },
      );
    }
    throw error;
  }
}

/** The pairing of a peer, if any. */
export function getPairing(
  s: Statements,
  channel: string,
  accountId: string,
  peerId: string,
): PairingRecord | undefined {
  return parseOptional<PairingRecord>(s.pairingById.get(channel, accountId, peerId));
}

/** The pairings matching `query`, oldest first. */
export function listPairings(dynamic: DynamicStatements, query: PairingListQuery): PairingRecord[] {
  const filters = ['channel = ?'];
  const params: unknown[] = [query.channel];
  if (query.accountId !== undefined) {
    filters.push('account_id = ?');
    params.push(query.accountId);
  }
  if (query.status !== undefined) {
    filters.push('status = ?');
    params.push(query.status);
  }
  if (query.code !== undefined) {
    filters.push("status = 'pending' AND code = ?");
    params.push(query.code);
  }
  const sql = `SELECT record FROM pairings${whereClause(filters)} ORDER BY created_at, rowid`;
  return dynamic
    .get(sql)
    .pluck()
    .all(...params)
    .map((json) => JSON.parse(json as string) as PairingRecord);
}

/** Deletes a peer's pairing; false when there was none. */
export function deletePairing(s: Statements, channel: string, accountId: string, peerId: string): boolean {
  return s.deletePairing.run(channel, accountId, peerId).changes > 0;
}
