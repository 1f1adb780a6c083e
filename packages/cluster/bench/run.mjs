// Benchmarks @colloquy/cluster: messages/s through 1, 2 and 3 runtimes sharing one PostgreSQL
// (graphile-worker jobs, zero-latency scripted model, 100 sessions), and how long a standby
// instance takes to take a channel lease over when the holder's connection dies.
// The runtimes run in this one process (one event loop) against a throwaway local server on the
// same two cores, so the figures show the cost of the shared queue, not a scale-out.
// Run with `pnpm bench` at the root (turbo builds dist/ first) or `node bench/run.mjs`.
import { cpus, loadavg } from 'node:os';
import { resolveConfig } from '@colloquy/core';
import { createRuntime } from '@colloquy/runtime';
import { openPostgresStore } from '@colloquy/store-postgres';
import { createScriptedModel, makeSessionRecord } from '@colloquy/testkit';
import { startTestPostgres } from '@colloquy/testkit/postgres';
import pg from 'pg';
import { createPostgresCluster } from '../dist/index.js';

const SESSIONS = 100;
const MESSAGES = 2000;

async function startInstance(url) {
  const store = await openPostgresStore({ url });
  const cluster = await createPostgresCluster({ url });
  const model = createScriptedModel(() => 'ok', { keepRequests: 0 });
  const runtime = createRuntime({
    config: resolveConfig({ agents: { defaults: { model: 'scripted/bench' } } }),
    store,
    cluster,
    models: () => ({ provider: model, modelId: 'bench' }),
  });
  await runtime.start();
  return { runtime, store, model };
}

async function throughput(server, instances) {
  const url = await server.createDatabase();
  const started = [];
  for (let i = 0; i < instances; i++) started.push(await startInstance(url));
  const keys = Array.from({ length: SESSIONS }, (_, i) => `agent:main:bench:dm:${i}`);
  for (const key of keys) await started[0].store.putSession(makeSessionRecord(key, { kind: 'dm' }));
  // 100 users, each sending its next message when the previous one was answered: one turn each.
  const t0 = performance.now();
  await Promise.all(
    keys.map(async (sessionKey, user) => {
      for (let i = 0; i < MESSAGES / SESSIONS; i++) {
        const via = started[(user + i) % instances].runtime.gateway;
        const { runId } = await via.call('agent', { sessionKey, message: `m${i}`, deliver: false });
        await via.call('agent.wait', { runId, timeoutMs: 120_000 });
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const turns = started.reduce((sum, s) => sum + s.model.callCount, 0);
  const done = (await started[0].store.listRuns({ statuses: ['done'], limit: 100_000 })).length;
  for (const s of started) await s.runtime.shutdown({ drainMs: 1000 });
  return {
    instances,
    messages: MESSAGES,
    done,
    turns,
    seconds,
    perSecond: MESSAGES / seconds,
    turnsPerSecond: turns / seconds,
  };
}

async function takeover(server) {
  const url = await server.createDatabase();
  const one = await createPostgresCluster({ url });
  const two = await createPostgresCluster({ url });
  const samples = [];
  for (let round = 0; round < 5; round++) {
    const held = await one.lease('bench:lease');
    const standby = two.lease('bench:lease');
    await new Promise((resolve) => setTimeout(resolve, 200));
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    const t0 = performance.now();
    await admin.query(
      `SELECT pg_terminate_backend(l.pid) FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted AND l.classid = $1`,
      [0x436f_6c02],
    );
    const lease = await standby;
    samples.push(performance.now() - t0);
    await admin.end();
    await lease.release();
    await held.release();
  }
  await one.stop();
  await two.stop();
  samples.sort((a, b) => a - b);
  return { median: samples[2], min: samples[0], max: samples[4] };
}

const server = await startTestPostgres();
try {
  console.log(`@colloquy/cluster bench: ${cpus().length} cores, load ${loadavg()[0].toFixed(2)}`);
  console.log(
    `${SESSIONS} users x ${MESSAGES / SESSIONS} messages, each sent once the previous was answered; zero-latency model; runtimes in one process`,
  );
  console.log('| instances | messages/s | turns/s | turns | done | seconds |');
  console.log('|---|---|---|---|---|---|');
  for (const n of [1, 2, 3]) {
    const r = await throughput(server, n);
    console.log(
      `| ${n} | ${r.perSecond.toFixed(0)} | ${r.turnsPerSecond.toFixed(0)} | ${r.turns} | ${r.done}/${r.messages} | ${r.seconds.toFixed(2)} |`,
    );
  }
  const t = await takeover(server);
  console.log(
    `lease takeover after the holder's connection dies (leaseRetryMs 500): median ${t.median.toFixed(0)} ms (min ${t.min.toFixed(0)}, max ${t.max.toFixed(0)}) over 5 rounds`,
  );
} finally {
  await server.stop();
}
