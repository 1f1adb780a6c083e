import { silentLogger } from '@colloquy/core';
import { collectUnhandledErrors, type UnhandledErrors } from '@colloquy/testkit';
import { startTestPostgres, type TestPostgres } from '@colloquy/testkit/postgres';
import { runMigrations } from 'graphile-worker';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPostgresCluster } from '../src/index.js';
import { ADD_JOB_SQL, runJobParams, startWorkers } from '../src/job-queue.js';

let server: TestPostgres;
beforeEach(async () => {
  server = await startTestPostgres();
});
afterEach(async () => {
  await server?.stop();
});

let unhandled: UnhandledErrors;
beforeEach(() => {
  unhandled = collectUnhandledErrors();
});
afterEach(() => unhandled.stop());

/** A promise and the function that settles it. */
function deferred<T = void>(): { promise: Promise<T>; settle: (value: T) => void } {
  let settle!: (value: T) => void;
  const promise = new Promise<T>((resolve) => {
    settle = resolve;
  });
  return { promise, settle };
}

/** A cluster member running one job that ends when told to, as a turn cut by a shutdown does. */
async function memberWithJobInFlight(url: string) {
  const lost: Error[] = [];
  const cluster = await createPostgresCluster({ url, onInstanceLost: (error) => lost.push(error) });
  const running = deferred();
  const ended = deferred<{ failed: boolean }>();
  await cluster.start(
    {
      async runJob() {
        running.settle();
        if ((await ended.promise).failed) throw new Error('the turn was cut by the shutdown');
      },
      drainJob: async () => {},
      onEvent: () => {},
    },
    { main: 2, subagent: 1, cron: 1 },
  );
  await cluster.requeueRun({ runId: 'r1', sessionKey: 'agent:main:main', lane: 'main' });
  await running.promise;
  return { cluster, lost, end: ended.settle };
}

describe('a cluster member whose database went away', () => {
  for (const failed of [true, false]) {
    it(`stops without an unhandled rejection when its job ${failed ? 'fails' : 'succeeds'} after the server stopped`, async () => {
      const url = await server.createDatabase();
      const { cluster, lost, end } = await memberWithJobInFlight(url);
      await server.stopServer();
      // What the runtime's shutdown does: stop the cluster, and end the turns in flight.
      const stopping = cluster.stop();
      end({ failed });
      await expect(stopping).resolves.toBeUndefined();
      // graphile-worker reports the job's outcome after the job settles, not before stop() resolves.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(unhandled.errors).toEqual([]);
      expect(lost).toHaveLength(1);
    });
  }

  it('reports a job whose outcome it could not record while running, for the instance to stop', async () => {
    const url = await server.createDatabase();
    const pool = new pg.Pool({ connectionString: url });
    pool.on('error', () => {});
    pool.on('connect', (client) => client.on('error', () => {}));
    await runMigrations({ pgPool: pool, logger: undefined });
    const running = deferred();
    const ended = deferred();
    const lost: Error[] = [];
    const workers = await startWorkers({
      pool,
      handlers: {
        async runJob() {
          running.settle();
          await ended.promise;
        },
        drainJob: async () => {},
        onEvent: () => {},
      },
      limits: { main: 1, subagent: 1, cron: 1 },
      maxJobsPerLane: Number.POSITIVE_INFINITY,
      pollIntervalMs: 100,
      onWorker: () => {},
      onOutcomeLost: (error) => lost.push(error),
      log: silentLogger,
    });
    await pool.query(ADD_JOB_SQL, runJobParams({ runId: 'r1', sessionKey: 'agent:main:main', lane: 'main' }));
    await running.promise;
    await server.stopServer();
    ended.settle();
    const deadline = Date.now() + 10_000;
    while (lost.length === 0 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(lost.map((error) => (error as { code?: string }).code)).toEqual(['ECONNREFUSED']);
    await workers.stop();
    await pool.end();
    expect(unhandled.errors).toEqual([]);
  });
});
