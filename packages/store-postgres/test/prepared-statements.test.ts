import { makeSessionRecord } from '@colloquy/testkit';
import { startTestPostgres, type TestPostgres } from '@colloquy/testkit/postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PgOperations } from '../src/pg-operations.js';
import { openPostgresStore } from '../src/postgres-store.js';

let server: TestPostgres;
beforeAll(async () => {
  server = await startTestPostgres();
});
afterAll(() => server?.stop());

/** The statements the transaction's connection holds prepared, after it read a session. */
async function preparedAfterARead(preparedStatements: boolean | undefined): Promise<string[]> {
  const store = await openPostgresStore({
    url: await server.createDatabase(),
    ...(preparedStatements === undefined ? {} : { preparedStatements }),
  });
  try {
    await store.putSession(makeSessionRecord('k1'));
    return await store.transaction(async (tx) => {
      expect((await tx.getSession('k1'))?.key).toBe('k1');
      const rows = await (tx as PgOperations).sql<{ statement: string }>(
        'SELECT statement FROM pg_prepared_statements',
      );
      return rows.map((row) => row.statement);
    });
  } finally {
    await store.close();
  }
}

describe('prepared statements', () => {
  it('prepares the store statements on the connection that runs them', async () => {
    const statements = await preparedAfterARead(undefined);
    expect(statements.some((text) => text.includes('FROM sessions WHERE key = $1'))).toBe(true);
  });

  it('prepares nothing when turned off', async () => {
    expect(await preparedAfterARead(false)).toEqual([]);
  });
});
