import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { DynamicStatements } from './dynamic-statements.js';

const db = new Database(':memory:');
afterAll(() => db.close());

describe('DynamicStatements', () => {
  it('prepares a text once and keeps the 128 texts used most recently', () => {
    const statements = new DynamicStatements(db);
    const sql = (n: number) => `SELECT ${n} AS n`;
    const first = statements.get(sql(0));
    for (let n = 1; n < 128; n++) statements.get(sql(n));
    expect(statements.get(sql(0))).toBe(first); // used again: now the most recent
    statements.get(sql(128)); // a 129th text drops the least recently used, sql(1)
    expect(statements.get(sql(0))).toBe(first);
    expect(statements.get(sql(0)).get()).toEqual({ n: 0 });
  });
});
