import type { StoredMessage } from '@colloquy/core';
import type { MessageSearchQuery, MessageSearchResult } from '@colloquy/core/store';
import type Database from 'better-sqlite3';
import {
  MESSAGE_INDEX,
  type MessageSearchPlan,
  PENDING_INDEX,
  planMessageSearch,
} from '../message-search-sql.js';
import type { DynamicStatements } from './dynamic-statements.js';
import type { Stmt } from './statements.js';

/** Runs a planned message search: the total, then the page of hits. */
export function runSearch(dynamic: DynamicStatements, plan: MessageSearchPlan): MessageSearchResult {
  const total = dynamic
    .get(plan.count.sql)
    .pluck()
    .get(...plan.count.params) as number;
  if (plan.hits === undefined || total === 0) return { hits: [], total };
  const rows = dynamic.get(plan.hits.sql).all(...plan.hits.params) as {
    sessionKey: string;
    message: string;
  }[];
  return {
    hits: rows.map((row) => ({
      sessionKey: row.sessionKey,
      message: JSON.parse(row.message) as StoredMessage,
    })),
    total,
  };
}

/**
 * A read-only connection cannot bring the file's index up to date, so within one read
 * transaction (one snapshot) it indexes what the file's index lacks into a temporary index,
 * searches both, and rolls the temporary entries back. Ranks of those messages come from the
 * small temporary index, so they compare only roughly with the others'.
 *
 * @param pendingIndex the statement filling the temporary index (see `CREATE_PENDING_INDEX_SQL`)
 */
export function searchReadonly(
  db: Database.Database,
  dynamic: DynamicStatements,
  pendingIndex: Stmt<[]>,
  query: MessageSearchQuery,
  plan: MessageSearchPlan,
): MessageSearchResult {
  const nested = db.inTransaction;
  db.exec(nested ? 'SAVEPOINT colloquy_search' : 'BEGIN');
  try {
    if (pendingIndex.run().changes === 0) return runSearch(dynamic, plan);
    return runSearch(dynamic, planMessageSearch(query, [MESSAGE_INDEX, PENDING_INDEX])!);
  } finally {
    if (db.inTransaction) {
      db.exec(nested ? 'ROLLBACK TO colloquy_search; RELEASE colloquy_search' : 'ROLLBACK');
    }
  }
}
