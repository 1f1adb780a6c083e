import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startTestPostgres } from '@colloquy/testkit/postgres';
import { startBenchApp } from './app-child.js';

const run = promisify(execFile);
const PSQL = '/usr/lib/postgresql/15/bin/psql';
/** How long the app settles after it is ready before the count starts. */
const SETTLE_MS = 10_000;

/** Transactions per second an idle app sends to its database,. */
export interface PostgresIdleFigures {
  transactionsPerSecond: number;
  seconds: number;
}

/**
 * Transactions per second that an idle reference app (web chat only) commits on its PostgreSQL
 * database: the `pg_stat_database` delta over `seconds`, read from the `postgres` database so
 * the reading itself is not counted. On PostgreSQL every statement outside a transaction is one,
 * so this counts the queries of the store, the cluster's pollers, its reaper and its leases.
 *
 * @param seconds - how long to count
 * @returns the rate
 */
export async function measurePostgresIdle(seconds: number): Promise<PostgresIdleFigures> {
  const server = await startTestPostgres();
  const url = await server.createDatabase();
  const database = new URL(url).pathname.slice(1);
  const app = await startBenchApp({ config: {}, env: { COLLOQUY_DATABASE_URL: url } });
  const psql = async (sql: string) =>
    (await run(PSQL, ['-X', '-A', '-t', '-c', sql, server.url])).stdout.trim();
  try {
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const count = async () => {
      // Each psql is a fresh connection, so it reads fresh counters.
      return Number(
        await psql(`SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = '${database}'`),
      );
    };
    const before = await count();
    const started = Date.now();
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    const after = await count();
    return { transactionsPerSecond: (after - before) / ((Date.now() - started) / 1000), seconds };
  } finally {
    await app.stop();
    await server.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const seconds = Number(process.argv[2] ?? 30);
  const figures = await measurePostgresIdle(seconds);
  console.log(
    `idle app on PostgreSQL (web chat only): ${figures.transactionsPerSecond.toFixed(1)} transactions/s over ${seconds} s`,
  );
}
