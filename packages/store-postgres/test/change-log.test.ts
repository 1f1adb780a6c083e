import { makeRunRecord, makeSessionRecord } from '@colloquy/testkit';
import { startTestPostgres, type TestPostgres } from '@colloquy/testkit/postgres';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresStore } from '../src/postgres-store.js';

let server: TestPostgres;
beforeAll(async () => {
  server = await startTestPostgres();
});
afterAll(() => server?.stop());

describe('the change log', () => {
  it('stays bounded as a session changes: at most the 512-version window and 63 more rows', async () => {
    const url = await server.createDatabase();
    const store = await openPostgresStore({ url });
    const client = new pg.Client({ connectionString: url, options: '-c search_path=colloquy' });
    await client.connect();
    try {
      await store.putSession(makeSessionRecord('k1'));
      await store.transaction(async (tx) => {
        for (let i = 0; i < 700; i++) await tx.createRun(makeRunRecord(`r${i}`, 'k1', { status: 'running' }));
      });
      const rows = await client.query<{ n: string; oldest: string }>(
        `SELECT count(*) AS n, min(version) AS oldest FROM session_changes WHERE session_key = 'k1'`,
      );
      expect(Number(rows.rows[0]?.n)).toBeLessThanOrEqual(512 + 63);
      expect(Number(rows.rows[0]?.n)).toBeGreaterThanOrEqual(512);
      expect((await store.getSession('k1'))?.stateVersion).toBe(700);
      // Asked from before the window, the changes are those of the window.
      expect((await store.readChanges('k1', 0))?.changes).toEqual({ message: 0, status: 512, patch: 0 });
    } finally {
      await client.end();
      await store.close();
    }
  });
});
