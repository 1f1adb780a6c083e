import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { startTestPostgres, type TestPostgres } from '@colloquy/testkit/postgres';
import { Logger, makeWorkerUtils, run, type WorkerEvents } from 'graphile-worker';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freeStrandedQueues } from '../src/instance-registry.js';
import { until } from './support/until.js';

// What the cluster relies on in graphile-worker that its documented API does not promise. Each
// test names the reliance and what to do when a graphile-worker release breaks it.

let server: TestPostgres;
beforeAll(async () => {
  server = await startTestPostgres();
});
afterAll(async () => {
  await server?.stop();
});

const installed = (): string => {
  const entry = createRequire(import.meta.url).resolve('graphile-worker');
  const manifest = JSON.parse(readFileSync(join(dirname(entry), '..', 'package.json'), 'utf8'));
  return `graphile-worker ${String(manifest.version)}`;
};

describe('graphile-worker, where the cluster goes beyond its public API', () => {
  it('hands a new job’s notice to the pool’s nudge, which then decides alone which workers look', async () => {
    const pool = new pg.Pool({ connectionString: await server.createDatabase(), max: 4 });
    pool.on('error', () => {});
    pool.on('connect', (client) => client.on('error', () => {}));
    const logger = new Logger(() => () => {});
    const utils = await makeWorkerUtils({ pgPool: pool, logger });
    const events: WorkerEvents = new EventEmitter();
    const notices: number[] = [];
    let listening = false;
    let looks = 0;
    let empty = 0;
    events.on('pool:create', ({ workerPool }) => {
      workerPool.nudge = (count) => void notices.push(count);
    });
    events.on('pool:listen:success', () => {
      listening = true;
    });
    events.on('worker:getJob:start', () => looks++);
    events.on('worker:getJob:empty', () => empty++);
    const runner = await run({
      pgPool: pool,
      concurrency: 2,
      taskList: { colloquy_probe: async () => {} },
      pollInterval: 5 * 60_000,
      noHandleSignals: true,
      events,
      logger,
    });
    const reason =
      `${installed()} no longer hands a new job's notice (jobs:insert) to WorkerPool.nudge alone. ` +
      "@colloquy/cluster replaces each pool's nudge so that its ready-job watch, not every pool, " +
      'decides which idle workers look for the job (startWorkers in src/job-queue.ts); graphile-worker ' +
      'has no public option for this. Find the new way to route notices before taking this release.';
    try {
      // Each worker looks once as it starts, then waits for a nudge or its five-minute poll.
      await until(() => listening && empty === 2, 'the probe workers started');
      const looksBefore = looks;
      await utils.addJob('colloquy_probe', {});
      // A second job's notice is handled after the first one's: a worker the first notice woke
      // outside nudge would have started looking by then.
      await until(() => notices.length > 0, `the first job’s notice reached nudge. ${reason}`, 5000);
      await utils.addJob('colloquy_probe', {});
      await until(() => notices.length > 1, `the second job’s notice reached nudge. ${reason}`, 5000);
      expect(notices, reason).toEqual([1, 1]);
      expect(looks - looksBefore, reason).toBe(0);
    } finally {
      await runner.stop();
      await utils.release();
      await pool.end();
    }
  });
  it('keeps a named queue’s lock in its private job_queues table, where the reaper frees a stranded one', async () => {
    const pool = new pg.Pool({ connectionString: await server.createDatabase(), max: 4 });
    pool.on('error', () => {});
    pool.on('connect', (client) => client.on('error', () => {}));
    const logger = new Logger(() => () => {});
    const utils = await makeWorkerUtils({ pgPool: pool, logger });
    const ran: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const runner = await run({
      pgPool: pool,
      concurrency: 2,
      taskList: {
        colloquy_probe: async (payload) => {
          const { name } = payload as { name: string };
          ran.push(name);
          if (name === 'first') await held;
        },
      },
      pollInterval: 100,
      noHandleSignals: true,
      logger,
    });
    const reason =
      `${installed()} changed its private tables _private_job_queues (id, queue_name, locked_at, ` +
      'locked_by) or _private_jobs (job_queue_id, locked_at). The cluster reaper frees session queues ' +
      'left locked without a locked job there (freeStrandedQueues in src/instance-registry.ts); the ' +
      'public jobs view does not show queue locks. Rewrite its statement for the new tables.';
    try {
      await utils.addJob('colloquy_probe', { name: 'first' }, { queueName: 'session:probe' });
      await until(() => ran.length === 1, 'the first job runs');
      await utils.addJob('colloquy_probe', { name: 'second' }, { queueName: 'session:probe' });
      // A queue whose job is locked is not stranded, whatever the grace.
      expect(await freeStrandedQueues(pool, 0), reason).toEqual([]);
      // What a failed pool's late completion does to a job another pool took again.
      await pool.query(
        `DELETE FROM graphile_worker._private_jobs
          WHERE locked_at IS NOT NULL AND job_queue_id IS NOT NULL`,
      );
      expect(await freeStrandedQueues(pool, 0), reason).toEqual(['session:probe']);
      await until(() => ran.length === 2, `the queue's next job runs. ${reason}`, 5000);
      expect(ran).toEqual(['first', 'second']);
    } finally {
      release();
      await runner.stop();
      await utils.release();
      await pool.end();
    }
  });
});
