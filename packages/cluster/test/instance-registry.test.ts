import { EventEmitter } from 'node:events';
import { silentLogger } from '@colloquy/core';
import { startTestPostgres, type TestPostgres } from '@colloquy/testkit/postgres';
import {
  Logger,
  makeWorkerUtils,
  type Runner,
  run,
  type WorkerEvents,
  type WorkerUtils,
} from 'graphile-worker';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureClusterSchema } from '../src/cluster-schema.js';
import { type InstanceRegistry, joinCluster } from '../src/instance-registry.js';

let server: TestPostgres;
beforeAll(async () => {
  server = await startTestPostgres();
});
afterAll(async () => {
  await server?.stop();
});

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

const logger = new Logger(() => () => {});

interface Queue {
  url: string;
  pool: pg.Pool;
  utils: WorkerUtils;
}

async function queue(): Promise<Queue> {
  const url = await server.createDatabase();
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  const utils = await makeWorkerUtils({ pgPool: pool, logger });
  cleanups.push(
    () => pool.end(),
    async () => utils.release(),
  );
  return { url, pool, utils };
}

/** A graphile-worker pool outside any cluster instance, running one job that never ends. */
async function hangingWorker(q: Queue): Promise<{ poolId: string; runner: Runner }> {
  const events: WorkerEvents = new EventEmitter();
  let poolId = '';
  let started = false;
  events.on('pool:create', ({ workerPool }) => {
    poolId = workerPool.id;
  });
  events.on('job:start', () => {
    started = true;
  });
  const runner = await run({
    pgPool: q.pool,
    concurrency: 1,
    taskList: { hang: () => new Promise<void>(() => {}) },
    pollInterval: 100,
    noHandleSignals: true,
    events,
    logger,
  });
  cleanups.push(() => runner.kill());
  await q.utils.addJob('hang', {}, { queueName: 'session:main' });
  const deadline = Date.now() + 10_000;
  while (!started && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  expect(started).toBe(true);
  return { poolId, runner };
}

async function member(q: Queue, id: string): Promise<{ registry: InstanceRegistry; control: pg.Client }> {
  const control = new pg.Client({ connectionString: q.url });
  await control.connect();
  await ensureClusterSchema(control);
  const registry = await joinCluster(control, {
    id,
    orphanGraceMs: 0,
    unlockWorkers: (workerIds) => q.utils.forceUnlockWorkers(workerIds),
    log: silentLogger,
    onLost: () => {},
  });
  cleanups.push(() => registry.leave());
  return { registry, control };
}

const lockedBy = async (q: Queue): Promise<(string | null)[]> =>
  (await q.pool.query<{ locked_by: string | null }>('SELECT locked_by FROM graphile_worker.jobs')).rows.map(
    (row) => row.locked_by,
  );

describe('the instance registry', () => {
  it('leaves the jobs of a live instance’s workers locked', async () => {
    const q = await queue();
    const { poolId } = await hangingWorker(q);
    const a = await member(q, 'a');
    await a.registry.addWorker(poolId);
    const b = await member(q, 'b');
    expect(await b.registry.reap()).toEqual({ dead: [], orphanWorkers: [] });
    expect(await lockedBy(q)).toEqual([poolId]);
  });

  it('unlocks the jobs of an instance whose connection is gone', async () => {
    const q = await queue();
    const { poolId } = await hangingWorker(q);
    const a = await member(q, 'a');
    await a.registry.addWorker(poolId);
    await a.control.end();
    const b = await member(q, 'b');
    expect(await b.registry.reap()).toEqual({ dead: ['a'], orphanWorkers: [] });
    expect(await lockedBy(q)).toEqual([null]);
  });

  it('unlocks the jobs of a worker pool that no instance registered, after the grace', async () => {
    const q = await queue();
    const { poolId } = await hangingWorker(q);
    const b = await member(q, 'b');
    expect(await b.registry.reap()).toEqual({ dead: [], orphanWorkers: [poolId] });
    expect(await lockedBy(q)).toEqual([null]);
  });
});
