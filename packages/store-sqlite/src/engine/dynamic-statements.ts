import type Database from 'better-sqlite3';
import { LRUCache } from 'lru-cache';
import type { Stmt } from './statements.js';

const DYNAMIC_CACHE_LIMIT = 128;

/**
 * The statements whose SQL depends on a query's filters, prepared on first use and kept (the 128
 * distinct texts used most recently).
 */
export class DynamicStatements {
  private readonly cache = new LRUCache<string, Stmt<unknown[]>>({ max: DYNAMIC_CACHE_LIMIT });

  constructor(private readonly db: Database.Database) {}

  /** The prepared statement for `sql`, in row (not pluck) mode. */
  get(sql: string): Stmt<unknown[]> {
    let statement = this.cache.get(sql);
    if (statement === undefined) {
      statement = this.db.prepare<unknown[]>(sql);
      this.cache.set(sql, statement);
    }
    // A cached statement may have been switched to pluck mode by another caller.
    return statement.pluck(false);
  }

  /** Forgets every cached statement (the store is closing). */
  clear(): void {
    this.cache.clear();
  }
}

/** `WHERE a AND b` for the given filters, or nothing when there are none. */
export function whereClause(filters: readonly string[]): string {
  return filters.length > 0 ? ` WHERE ${filters.join(' AND ')}` : '';
}
