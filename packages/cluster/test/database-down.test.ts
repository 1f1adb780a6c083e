import {
  collectUnhandledErrors,
  createRecordingLogger,
  type RecordingLogger,
  type UnhandledErrors,
} from '@colloquy/testkit';
import { startTestPostgres, type TestPostgres } from '@colloquy/testkit/postgres';
import { Logger, makeWorkerUtils } from 'graphile-worker';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPostgresCluster } from '../src/index.js';
import { addJobInTransaction, runJob, startWorkers } from '../src/job-queue.js';
import { until } from './support/until.js';

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

/** Whether graphile-worker logged that it could not record a job's outcome. */
const outcomeLost = (log: RecordingLogger) =>
  log.entries.some(
    (entry) => entry.level === 'error' && /^Failed to (complete|fail) jobs/.test(entry.msg ?? ''),
  );

/** A cluster member running one job that ends when told to, as a turn cut by a shutdown does. */
async function memberWithJobInFlight(url: string) {
  const lost: Error[] = [];
  const log = createRecordingLogger();
  const cluster = await createPostgresCluster({
    url,
    logger: log,
    onInstanceLost: (error) => lost.push(error),
  });
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
  return { cluster, lost, log, end: ended.settle };
}

/**
 * Holds the next statement of `pool` that completes a job (graphile-worker's `complete_job` deletes
 * it) for `delayMs`: as a completion that waits behind others on a busy pool after a restart.
 */
function delayNextCompletion(pool: pg.Pool, delayMs: number): void {
  let armed = true;
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as { query: unknown }).query = (...args: unknown[]) => {
      const config = args[0] as { text?: unknown } | undefined;
      const text = typeof config?.text === 'string' ? config.text : '';
      if (armed && /delete from\s+"?graphile_worker"?\._private_jobs/i.test(text)) {
        armed = false;
        return new Promise((resolve) => setTimeout(resolve, delayMs)).then(() => query(...args));
      }
      return query(...args);
    };
  });
}

describe('a cluster member whose database went away', () => {
  for (const failed of [true, false]) {
    it(`stops without an unhandled rejection when its job ${failed ? 'fails' : 'succeeds'} after the server stopped`, async () => {
      const url = await server.createDatabase();
      const { cluster, lost, log, end } = await memberWithJobInFlight(url);
      await server.stopServer();
      // What the runtime's shutdown does: stop the cluster, and end the turns in flight.
      const stopping = cluster.stop();
      end({ failed });
      await expect(stopping).resolves.toBeUndefined();
      // graphile-worker records the job's outcome after the job settles, not before stop() resolves:
      // its report that it could not is the end of the path a rejection would escape from.
      await until(() => outcomeLost(log), 'the lost outcome was logged');
      // Node reports an unhandled rejection once the microtasks of its tick have run: one macrotask on.
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled.errors).toEqual([]);
      // A server that went away is not this instance taken for dead.
      expect(lost).toEqual([]);
    });
  }

  it('runs again, once the database is back, a job whose outcome it could not record while running', async () => {
    const url = await server.createDatabase();
    const pool = new pg.Pool({ connectionString: url });
    pool.on('error', () => {});
    pool.on('connect', (client) => client.on('error', () => {}));
    const utils = await makeWorkerUtils({ pgPool: pool, logger: new Logger(() => () => {}) });
    const runs: string[] = [];
    const firstRunning = deferred();
    const firstEnded = deferred();
    const log = createRecordingLogger();
    const workers = await startWorkers({
      pool,
      handlers: {
        async runJob(runId) {
          runs.push(runId);
          if (runs.length === 1) {
            firstRunning.settle();
            await firstEnded.promise;
          }
        },
        drainJob: async () => {},
        onEvent: () => {},
      },
      limits: { main: 1, subagent: 1, cron: 1 },
      maxJobsPerLane: Number.POSITIVE_INFINITY,
      pollIntervalMs: 100,
      onWorker: () => {},
      unlockWorkers: (poolIds) => utils.forceUnlockWorkers(poolIds),
      log,
    });
    try {
      await addJobInTransaction(
        (text, values) => pool.query(text, values),
        runJob({ runId: 'r1', sessionKey: 'agent:main:main', lane: 'main' }),
      );
      await firstRunning.promise;
      await server.stopServer();
      firstEnded.settle();
      await until(() => outcomeLost(log), 'the lost outcome was logged');
      await server.startServer();
      // The lane's new runner finds the job its failed one left locked, and runs it again.
      await until(() => runs.length === 2, 'the job ran again', 30_000);
      expect(runs).toEqual(['r1', 'r1']);
      await until(
        async () => (await pool.query('SELECT 1 FROM graphile_worker.jobs')).rowCount === 0,
        'the job ended',
      );
      expect(unhandled.errors).toEqual([]);
    } finally {
      await workers.stop();
      await utils.release();
      await pool.end();
    }
  });

  it('lets a failed runner complete a job that ends after the database is back before its lane runs the session again', async () => {
    const url = await server.createDatabase();
    // New connections only: the completion is delayed on a connection opened after the restart.
    const pool = new pg.Pool({ connectionString: url, idleTimeoutMillis: 1 });
    pool.on('error', () => {});
    pool.on('connect', (client) => client.on('error', () => {}));
    const utils = await makeWorkerUtils({ pgPool: pool, logger: new Logger(() => () => {}) });
    const runs: string[] = [];
    const held = new Map([
      ['r1', deferred()],
      ['r2', deferred()],
    ]);
    const log = createRecordingLogger();
    const workers = await startWorkers({
      pool,
      handlers: {
        async runJob(runId) {
          // A job run a second time takes longer than the delayed completion of its first run.
          const again = runs.includes(runId);
          runs.push(runId);
          const gate = held.get(runId);
          held.delete(runId);
          await gate?.promise;
          if (again) await new Promise((resolve) => setTimeout(resolve, 3000));
        },
        drainJob: async () => {},
        onEvent: () => {},
      },
      limits: { main: 2, subagent: 1, cron: 1 },
      maxJobsPerLane: Number.POSITIVE_INFINITY,
      pollIntervalMs: 100,
      onWorker: () => {},
      unlockWorkers: (poolIds) => utils.forceUnlockWorkers(poolIds),
      log,
    });
    const add = (runId: string, sessionKey: string) =>
      addJobInTransaction(
        (text, values) => pool.query(text, values),
        runJob({ runId, sessionKey, lane: 'main' }),
      );
    try {
      const r1 = held.get('r1')!;
      const r2 = held.get('r2')!;
      await add('r1', 's1');
      await add('r2', 's2');
      await until(() => runs.length === 2, 'both turns run');
      await server.stopServer();
      // r1 ends while the server is down: its outcome is lost and the runner fails.
      r1.settle();
      await until(() => outcomeLost(log), 'the lost outcome was logged');
      await server.startServer();
      // r2 ends once the database is back: the failed runner completes it, slowly.
      delayNextCompletion(pool, 1500);
      r2.settle();
      await until(() => runs.includes('r1', 1), 'r1, whose outcome was lost, ran again', 30_000);
      // The session of r2 runs its next turn: its named queue was not left locked.
      await add('r3', 's2');
      await until(() => runs.includes('r3'), 'the next turn of r2’s session ran', 15_000);
      expect(runs.filter((runId) => runId === 'r2')).toEqual(['r2']);
      await until(
        async () => (await pool.query('SELECT 1 FROM graphile_worker.jobs')).rowCount === 0,
        'every job ended',
      );
      expect(unhandled.errors).toEqual([]);
    } finally {
      await workers.stop();
      await utils.release();
      await pool.end();
    }
  });
});
