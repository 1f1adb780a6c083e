import { silentLogger } from '@colloquy/core';
import { startTestPostgres, type TestPostgres } from '@colloquy/testkit/postgres';
import { runMigrations } from 'graphile-worker';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  addJobInTransaction,
  type ColloquyJob,
  drainJob,
  runJob,
  startWorkers,
  type Workers,
} from '../src/job-queue.js';
import { until as waitUntil } from './support/until.js';

let server: TestPostgres;
beforeAll(async () => {
  server = await startTestPostgres();
});
afterAll(async () => {
  await server?.stop();
});

const open: { workers: Workers; pool: pg.Pool }[] = [];
afterEach(async () => {
  for (const { workers, pool } of open.splice(0)) {
    await workers.stop();
    await pool.end();
  }
});

/** A gate the handlers wait on, and what ran. */
function recorder() {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const started: string[] = [];
  const inFlight = new Map<string, number>();
  let most = 0;
  let mostPerSession = 0;
  const hold = async (id: string, session: string, wait: boolean) => {
    started.push(id);
    inFlight.set(session, (inFlight.get(session) ?? 0) + 1);
    mostPerSession = Math.max(mostPerSession, inFlight.get(session) ?? 0);
    most = Math.max(
      most,
      [...inFlight.values()].reduce((n, v) => n + v, 0),
    );
    if (wait) await gate;
    inFlight.set(session, (inFlight.get(session) ?? 1) - 1);
  };
  return {
    started,
    release,
    hold,
    get most() {
      return most;
    },
    get mostPerSession() {
      return mostPerSession;
    },
  };
}

const add = (pool: pg.Pool, job: ColloquyJob) =>
  addJobInTransaction((text, values) => pool.query(text, values), job);

// Generous: a miss here means waiting for the workers' five-minute backstop poll, not a slow machine.
const until = (check: () => boolean, what: string) => waitUntil(check, what, 30_000);

async function start(
  handlers: { runJob(runId: string): Promise<void>; drainJob(sessionKey: string): Promise<void> },
  main: number,
): Promise<pg.Pool> {
  const url = await server.createDatabase();
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  await runMigrations({ pgPool: pool, logger: undefined });
  const workers = await startWorkers({
    pool,
    handlers: { ...handlers, onEvent: () => {} },
    limits: { main, subagent: 1, cron: 1 },
    maxJobsPerLane: Number.POSITIVE_INFINITY,
    pollIntervalMs: 100,
    onWorker: () => {},
    unlockWorkers: async (poolIds) => {
      throw new Error(`no runner fails in these tests, but ${poolIds.join(', ')} did`);
    },
    log: silentLogger,
  });
  open.push({ workers, pool });
  return pool;
}

describe('the job queue', () => {
  it('runs as many turns of a lane at once as the lane allows, one per session', async () => {
    const r = recorder();
    const sessionOf = (runId: string) => runId.split('/')[0] ?? runId;
    const pool = await start(
      { runJob: (runId) => r.hold(runId, sessionOf(runId), true), drainJob: async () => {} },
      40,
    );
    for (let i = 0; i < 40; i++) {
      const sessionKey = `s${i}`;
      await add(pool, runJob({ runId: `${sessionKey}/1`, sessionKey, lane: 'main' }));
    }
    // A second turn of two sessions waits behind the first.
    for (const sessionKey of ['s0', 's1']) {
      await add(pool, runJob({ runId: `${sessionKey}/2`, sessionKey, lane: 'main' }));
    }
    try {
      await until(() => r.started.length >= 40, '40 turns run at once');
      expect(r.most).toBe(40);
    } finally {
      r.release();
    }
    await until(() => r.started.length === 42, 'the queued turns ran');
    expect(r.mostPerSession).toBe(1);
  });

  it('takes a job that became due later at the next look, not at the workers’ own poll', async () => {
    const ran: string[] = [];
    const pool = await start(
      {
        runJob: async (runId) => {
          ran.push(runId);
        },
        drainJob: async () => {},
      },
      8,
    );
    const later = runJob({ runId: 'later', sessionKey: 'main', lane: 'main' });
    await pool.query(
      "SELECT graphile_worker.add_job($1, $2::json, queue_name => $3, run_at => now() + interval '300 milliseconds')",
      [later.task, JSON.stringify(later.payload), later.queueName],
    );
    await until(() => ran.length === 1, 'the job due later ran');
    expect(ran).toEqual(['later']);
  });

  it('runs the drain queued behind a session’s turn as soon as the turn ends', async () => {
    const r = recorder();
    const drained: string[] = [];
    const pool = await start(
      {
        runJob: (runId) => r.hold(runId, 'main', true),
        drainJob: async (sessionKey) => {
          drained.push(sessionKey);
        },
      },
      4,
    );
    await add(pool, runJob({ runId: 'turn', sessionKey: 'main', lane: 'main' }));
    await until(() => r.started.length === 1, 'the turn started');
    // Its notice woke a drain worker that found the session's queue locked and went idle. A drain
    // of another session queued after it runs once a drain worker has looked past the locked one.
    await add(pool, drainJob('main'));
    await add(pool, drainJob('other'));
    await until(() => drained.length === 1, 'the other session’s drain ran');
    expect(drained).toEqual(['other']);
    r.release();
    await until(() => drained.length === 2, 'the drain ran');
    expect(drained).toEqual(['other', 'main']);
  });
});
