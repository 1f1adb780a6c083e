import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planMessageSearch } from './message-search-sql.js';
import { migrate } from './migrations.js';

let db: Database.Database;

beforeAll(() => {
  db = new Database(':memory:');
  migrate(db);
});
afterAll(() => db.close());

function explain(sql: string, params: unknown[]): string[] {
  return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map(
    (r) => r.detail,
  );
}

describe('planMessageSearch', () => {
  it('quotes every word, so no query text is read as FTS syntax', () => {
    const plan = planMessageSearch({ text: 'crane AND "port* NEAR(x' });
    expect(plan?.count.params).toEqual(['"crane" "and" "port" "near" "x"']);
    expect(planMessageSearch({ text: '*** ""' })).toBeUndefined();
    expect(planMessageSearch({ text: 'x', keys: [] })).toBeUndefined();
  });

  it('finds hits through the full-text index and joins rows by key, never scanning the transcripts', () => {
    const plan = planMessageSearch({
      text: 'harbour crane',
      kinds: ['group'],
      agentIds: ['main'],
      limit: 10,
    });
    const details = explain(plan!.hits!.sql, plan!.hits!.params);
    expect(details.some((d) => /VIRTUAL TABLE INDEX/.test(d))).toBe(true);
    expect(details.some((d) => /^SCAN (m|messages)\b/.test(d))).toBe(false);
    expect(details.some((d) => /^SCAN (s|sessions)\b/.test(d))).toBe(false);
  });

  it('counts without joins when no session filter is given, and skips the hit query for limit 0', () => {
    const plan = planMessageSearch({ text: 'crane', limit: 0 });
    expect(plan?.hits).toBeUndefined();
    expect(plan?.count.sql).not.toContain('JOIN');
  });
});
