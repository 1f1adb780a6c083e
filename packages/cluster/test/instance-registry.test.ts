import { EventEmitter } from 'node:events';
import { createRecordingLogger, type RecordingLogger } from '@colloquy/testkit';
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
import { until } from './support/until.js';

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
  await until(() => started, 'the hanging job started');
  return { poolId, runner };
}

interface Member {
  registry: InstanceRegistry;
  control: pg.Client;
  /** Why the member was reported lost, if it was. */
  lost: Error[];
  log: RecordingLogger;
}

/**
 * A cluster member. `gone` makes it a process that died: once joined, it opens no connection again.
 * The grace after a server start is off unless given: the test server has just started.
 */
async function member(
  q: Queue,
  id: string,
  options: { gone?: boolean; restartGraceMs?: number } = {},
): Promise<Member> {
  let joined = false;
  const connect = async () => {
    if (options.gone && joined) throw new Error('the process is gone');
    const client = new pg.Client({ connectionString: q.url });
    await client.connect();
    return client;
  };
  const control = await connect();
  joined = true;
  await ensureClusterSchema(control);
  const lost: Error[] = [];
  const log = createRecordingLogger();
  const registry = await joinCluster(control, {
    id,
    connect,
    orphanGraceMs: 0,
    restartGraceMs: options.restartGraceMs ?? 0,
    unlockWorkers: (workerIds) => q.utils.forceUnlockWorkers(workerIds),
    log,
    onLost: (error) => lost.push(error),
  });
  cleanups.push(() => registry.leave());
  return { registry, control, lost, log };
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
    expect(await b.registry.reap()).toEqual({ dead: [], orphanWorkers: [], strandedQueues: [] });
    expect(await lockedBy(q)).toEqual([poolId]);
  });

  it('unlocks the jobs of an instance whose connection is gone', async () => {
    const q = await queue();
    const { poolId } = await hangingWorker(q);
    const a = await member(q, 'a', { gone: true });
    await a.registry.addWorker(poolId);
    await a.control.end();
    const b = await member(q, 'b');
    expect(await b.registry.reap()).toEqual({ dead: ['a'], orphanWorkers: [], strandedQueues: [] });
    expect(await lockedBy(q)).toEqual([null]);
  });

  it('unlocks the jobs of a worker pool that no instance registered, after the grace', async () => {
    const q = await queue();
    const { poolId } = await hangingWorker(q);
    const b = await member(q, 'b');
    expect(await b.registry.reap()).toEqual({ dead: [], orphanWorkers: [poolId], strandedQueues: [] });
    expect(await lockedBy(q)).toEqual([null]);
  });

  it('frees a session queue left locked without a locked job, after the grace', async () => {
    const q = await queue();
    const { poolId } = await hangingWorker(q);
    const a = await member(q, 'a');
    await a.registry.addWorker(poolId);
    // A failed pool's late completion deletes the job a live pool took again; the queue stays locked.
    await q.pool.query('DELETE FROM graphile_worker._private_jobs');
    const b = await member(q, 'b');
    expect(await b.registry.reap()).toEqual({
      dead: [],
      orphanWorkers: [],
      strandedQueues: ['session:main'],
    });
    expect(b.log.entries.map((entry) => entry.msg)).toContain(
      'cluster: freed session queues left locked without a running job',
    );
    expect(await b.registry.reap()).toEqual({ dead: [], orphanWorkers: [], strandedQueues: [] });
  });

  it('takes its lock again when its control connection is cut, and is not taken for dead', async () => {
    const q = await queue();
    const { poolId } = await hangingWorker(q);
    const a = await member(q, 'a');
    await a.registry.addWorker(poolId);
    const b = await member(q, 'b');
    await a.control.query('SELECT pg_terminate_backend(pg_backend_pid())').catch(() => {});
    await until(
      () => a.log.entries.some((entry) => entry.msg === 'cluster: the control connection is back'),
      'a took its lock again',
    );
    expect(a.registry.disconnectedSince).toBeUndefined();
    expect(await b.registry.reap()).toEqual({ dead: [], orphanWorkers: [], strandedQueues: [] });
    expect(await lockedBy(q)).toEqual([poolId]);
    expect(a.lost).toEqual([]);
  });

  it('reports an instance that was taken for dead while its control connection was down as lost', async () => {
    const q = await queue();
    const a = await member(q, 'a');
    // What another instance's reaper does when it finds a's lock free: a's row goes.
    await q.pool.query('DELETE FROM colloquy_cluster.instances WHERE id = $1', ['a']);
    await a.control.query('SELECT pg_terminate_backend(pg_backend_pid())').catch(() => {});
    await until(() => a.lost.length > 0, 'a was reported lost');
    expect(a.lost[0]!.message).toContain('taken for dead');
  });

  it('takes nobody for dead right after the server started: everyone is reconnecting', async () => {
    const q = await queue();
    await member(q, 'a', { gone: true });
    await server.stopServer();
    await server.startServer();
    const b = await member(q, 'b', { restartGraceMs: 60_000 });
    expect(await b.registry.reap()).toEqual({ dead: [], orphanWorkers: [], strandedQueues: [] });
    const c = await member(q, 'c');
    expect(await c.registry.reap()).toEqual({ dead: ['a'], orphanWorkers: [], strandedQueues: [] });
  });
});
