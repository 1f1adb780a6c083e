import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { startTestPostgres, type TestPostgres } from '@colloquy/testkit/postgres';
import { Logger, makeWorkerUtils, run, type WorkerEvents } from 'graphile-worker';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

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

async function until(check: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
}

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
    try {
      // Each worker looks once as it starts, then waits for a nudge or its five-minute poll.
      await until(() => listening && empty === 2, 10_000);
      expect(listening && empty === 2, 'the probe workers did not start').toBe(true);
      const looksBefore = looks;
      await utils.addJob('colloquy_probe', {});
      await until(() => notices.length > 0, 5000);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const reason =
        `${installed()} no longer hands a new job's notice (jobs:insert) to WorkerPool.nudge alone. ` +
        "@colloquy/cluster replaces each pool's nudge so that its ready-job watch, not every pool, " +
        'decides which idle workers look for the job (startWorkers in src/job-queue.ts); graphile-worker ' +
        'has no public option for this. Find the new way to route notices before taking this release.';
      expect(notices, reason).toEqual([1]);
      expect(looks - looksBefore, reason).toBe(0);
    } finally {
      await runner.stop();
      await utils.release();
      await pool.end();
    }
  });
});
