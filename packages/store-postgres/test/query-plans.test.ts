import { startTestPostgres, type TestPostgres } from '@colloquy/testkit/postgres';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { messageSearchSql } from '../src/message-search-sql.js';
import { openPostgresStore, type PostgresStore } from '../src/postgres-store.js';
import { sessionListSql } from '../src/session-list-sql.js';

let server: TestPostgres;
let store: PostgresStore;
let client: pg.Client;
const NOW = 1_700_000_000_000;
const KINDS = ['dm', 'group', 'subagent', 'cron'] as const;

beforeAll(async () => {
  server = await startTestPostgres();
  const url = await server.createDatabase();
  store = await openPostgresStore({ url });
  await store.transaction(async (tx) => {
    for (let i = 0; i < 5000; i++) {
      await tx.putSession({
        key: `agent:main:s${i}`,
        sessionId: `sid-${i}`,
        agentId: 'main',
        kind: KINDS[i % KINDS.length]!,
        createdAt: NOW,
        updatedAt: NOW - i * 1000,
        ...(i % 7 === 0 ? { spawnedBy: 'agent:main:main' } : {}),
      });
    }
    await tx.putSession({
      key: 'big',
      sessionId: 'big',
      agentId: 'main',
      kind: 'other',
      createdAt: NOW,
      updatedAt: NOW,
    });
    for (let start = 0; start < 5000; start += 500) {
      await tx.appendMessages(
        'big',
        Array.from({ length: 500 }, (_, i) => ({
          role: 'user' as const,
          content: `m${start + i}`,
          timestamp: NOW,
        })),
      );
    }
  });
  client = new pg.Client({ connectionString: url, options: '-c search_path=colloquy' });
  await client.connect();
  // A tenth of the sessions archived; a long run history with a few runs still active.
  await client.query(`UPDATE sessions SET archived_at = updated_at WHERE key LIKE 'agent:main:s%0'`);
  await client.query(`
    INSERT INTO runs (run_id, session_key, status, created_at, record)
    SELECT 'r' || i, 'agent:main:s' || (i % 5000), CASE WHEN i % 4000 = 0 THEN 'running' ELSE 'done' END,
      ${NOW} - i, '{}'::json
    FROM generate_series(1, 20000) AS i`);
  await client.query('ANALYZE');
});
afterAll(async () => {
  await client?.end();
  await store?.close();
  await server?.stop();
});

async function plan(text: string, values: unknown[]): Promise<string> {
  const result = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${text}`, values);
  return result.rows.map((row) => row['QUERY PLAN']).join('\n');
}

/**
 * The plan PostgreSQL keeps for `text` as a prepared statement once it settles on a generic plan
 * (one that does not look at the values), as the store's named statements may.
 */
async function genericPlan(text: string, values: unknown[]): Promise<string> {
  const literal = (value: unknown): string =>
    Array.isArray(value)
      ? `ARRAY[${value.map(literal).join(', ')}]`
      : `'${String(value).replace(/'/g, "''")}'`;
  await client.query('SET plan_cache_mode = force_generic_plan');
  try {
    await client.query(`PREPARE generic_probe AS ${text}`);
    const args = values.length > 0 ? `(${values.map(literal).join(', ')})` : '';
    const result = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN EXECUTE generic_probe${args}`);
    return result.rows.map((row) => row['QUERY PLAN']).join('\n');
  } finally {
    await client.query('DEALLOCATE ALL');
    await client.query('RESET plan_cache_mode');
  }
}

describe('query plans', () => {
  it.each([
    ['no filter', {}],
    ['one kind', { kinds: ['cron'] }],
    ['several kinds', { kinds: ['dm', 'group'] }],
    ['active minutes', { activeMinutes: 60 }],
    ['spawned by', { spawnedBy: 'agent:main:main' }],
    ['archived included', { includeArchived: true, kinds: ['dm'] }],
  ] as const)('lists sessions (%s) by walking an index, never scanning the table', async (_name, query) => {
    const sql = sessionListSql({ ...query, limit: 200 }, 'rows', NOW)!;
    for (const text of [await plan(sql.text, sql.values), await genericPlan(sql.text, sql.values)]) {
      expect(text).not.toMatch(/Seq Scan on sessions/);
      expect(text).toMatch(/Index Scan|Index Only Scan/);
    }
  });

  it('lists the active runs from their own index, not along the whole history', async () => {
    const active = `SELECT record FROM runs WHERE status = ANY($1) AND status IN ('queued', 'running')
      ORDER BY created_at DESC, run_id DESC LIMIT $2`;
    const values = [['queued', 'running'], 100];
    for (const text of [await plan(active, values), await genericPlan(active, values)]) {
      expect(text).toMatch(/runs_active/);
      expect(text).not.toMatch(/Seq Scan on runs/);
    }
    const runs = await store.listRuns({ statuses: ['queued', 'running'] });
    expect(runs).toHaveLength(5);
  });

  it('reads a transcript tail backwards along the primary key', async () => {
    const tail =
      'SELECT seq, message FROM messages WHERE session_key = $1 AND seq < $2 ORDER BY seq DESC LIMIT $3';
    const values = ['big', Number.MAX_SAFE_INTEGER, 20];
    for (const text of [await plan(tail, values), await genericPlan(tail, values)]) {
      expect(text).toMatch(/Index Scan Backward using messages_pkey/);
      expect(text).not.toMatch(/Seq Scan|Sort/);
    }
  });

  it('reads a page deep in a transcript from a bound, not by skipping rows', async () => {
    const text = await plan(
      `SELECT seq, message FROM messages WHERE session_key = $1
         AND seq < (SELECT least($2::bigint, max(seq) + 1) - $3::bigint FROM messages WHERE session_key = $1)
         AND $3::bigint >= 0 ORDER BY seq DESC LIMIT $4`,
      ['big', Number.MAX_SAFE_INTEGER, 4000, 20],
    );
    expect(text).toMatch(/Index Scan Backward using messages_pkey/);
    expect(text).not.toMatch(/Seq Scan|Sort/);
    const page = await store.readTail('big', 3, { offset: 4000 });
    expect(page.map((m) => m.content)).toEqual(['m997', 'm998', 'm999']);
  });

  it('keeps no SQL-language function but those the planner inlines (the others are planned on every call)', async () => {
    const { rows } = await client.query<{ name: string }>(
      `SELECT p.proname AS name FROM pg_proc p
         JOIN pg_language l ON l.oid = p.prolang JOIN pg_namespace n ON n.oid = p.pronamespace
       WHERE n.nspname = current_schema() AND l.lanname = 'sql' ORDER BY 1`,
    );
    expect(rows.map((row) => row.name)).toEqual(['colloquy_merge_json', 'colloquy_nul_safe']);
    // Inlined: the plan computes the function's expression, with no call to the function left.
    for (const call of ['colloquy_merge_json(record, record)', 'colloquy_nul_safe(record)']) {
      const result = await client.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN (VERBOSE, COSTS OFF) SELECT ${call} FROM runs`,
      );
      const output = result.rows.map((row) => row['QUERY PLAN']).join('\n');
      expect(output).toContain('Output: ');
      expect(output).not.toContain('colloquy_');
    }
  });

  it('searches transcripts through the GIN index', async () => {
    const sql = messageSearchSql({ text: 'm1234', agentIds: ['main'], limit: 10 })!;
    const text = await plan(sql.hits!.text, sql.hits!.values);
    expect(text).toMatch(/Bitmap Index Scan on messages_search/);
    expect(text).not.toMatch(/Seq Scan on messages/);
  });
});
