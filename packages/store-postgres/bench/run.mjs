// Benchmarks @colloquy/store-postgres beside @colloquy/store-sqlite on the same data and workloads:
// sessions.list over 10,000 sessions (limit 200), a 20-message tail of a 50,000-message transcript,
// and appends to 100 sessions. PostgreSQL is a throwaway local server (loopback TCP, fsync off, as
// in the tests); the figures show the cost of the driver and the round trips, not of a disk.
// Run with `pnpm bench` at the root (turbo builds dist/ first) or `node bench/run.mjs`.
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStore } from '@colloquy/store-sqlite';
import { startTestPostgres } from '@colloquy/testkit/postgres';
import { Bench } from 'tinybench';
import { openPostgresStore } from '../dist/index.js';

const SESSIONS = 10_000;
const LIST_LIMIT = 200;
const BIG_TRANSCRIPT = 50_000;
const TAIL = 20;
const APPEND_SESSIONS = 100;
const APPEND_MESSAGES = 5_000;
const NOW = Date.now();
const KINDS = ['dm', 'group', 'subagent', 'cron', 'main', 'other'];

function prng(seed) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function sessions() {
  const random = prng(42);
  return Array.from({ length: SESSIONS }, (_, i) => {
    const kind = KINDS[Math.floor(random() ** 1.5 * KINDS.length)];
    const updatedAt = NOW - Math.floor(random() * 48 * 3_600_000);
    return {
      key: `agent:main:${kind}:${i}`,
      sessionId: `s-${i}`,
      agentId: 'main',
      kind,
      createdAt: updatedAt - 3_600_000,
      updatedAt,
      displayName: `Session ${i}`,
      deliveryContext: { channel: 'telegram', to: String(100_000 + i), accountId: 'default' },
      usage: { inputTokens: 1200, outputTokens: 300, totalTokens: 1500 },
      ...(kind === 'subagent' ? { spawnedBy: 'agent:main:main', spawnDepth: 1 } : {}),
    };
  });
}

const message = (i) => ({
  role: i % 2 === 0 ? 'user' : 'assistant',
  content: `Message number ${i}. ${'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(3)}`,
  timestamp: NOW + i,
});

async function p50(fn) {
  const bench = new Bench({ time: 1000, warmupTime: 200 });
  bench.add('task', fn);
  await bench.run();
  return bench.tasks[0].result.latency.p50;
}

async function measureStore(store) {
  await store.transaction(async (tx) => {
    for (const session of sessions()) await tx.putSession(session);
  });
  const list = await p50(() => store.listSessions({ kinds: ['dm', 'group'], limit: LIST_LIMIT, now: NOW }));
  const key = 'agent:main:transcript:big';
  await store.putSession({
    key,
    sessionId: 'big',
    agentId: 'main',
    kind: 'other',
    createdAt: NOW,
    updatedAt: NOW,
  });
  for (let start = 0; start < BIG_TRANSCRIPT; start += 1000) {
    const batch = Array.from({ length: 1000 }, (_, i) => message(start + i));
    await store.transaction((tx) => tx.appendMessages(key, batch));
  }
  const tail = await p50(() => store.readTail(key, TAIL));
  for (let i = 0; i < APPEND_SESSIONS; i++) {
    await store.putSession({
      key: `agent:main:dm:a${i}`,
      sessionId: `a-${i}`,
      agentId: 'main',
      kind: 'dm',
      createdAt: NOW,
      updatedAt: NOW,
    });
  }
  // Appends as the runtime makes them: every session's writer awaits its own append.
  const started = performance.now();
  await Promise.all(
    Array.from({ length: APPEND_SESSIONS }, async (_, s) => {
      for (let i = s; i < APPEND_MESSAGES; i += APPEND_SESSIONS)
        await store.appendMessages(`agent:main:dm:a${s}`, [message(i)]);
    }),
  );
  const append = APPEND_MESSAGES / ((performance.now() - started) / 1000);
  return { list, tail, append };
}

const ms = (v) => (v < 0.1 ? `${(v * 1000).toFixed(1)} µs` : `${v.toFixed(3)} ms`);
const dir = mkdtempSync(join(tmpdir(), 'colloquy-pg-bench-'));
const server = await startTestPostgres();
try {
  process.stdout.write('measuring SQLite...\n');
  const sqliteStore = openSqliteStore({ file: join(dir, 'bench.db') });
  const sqlite = await measureStore(sqliteStore);
  await sqliteStore.close();
  process.stdout.write('measuring PostgreSQL...\n');
  const postgresStore = await openPostgresStore({ url: await server.createDatabase(), maxConnections: 20 });
  const postgres = await measureStore(postgresStore);
  await postgresStore.close();
  const row = (workload, a, b, target) =>
    console.log(`${workload.padEnd(52)} ${a.padEnd(14)} ${b.padEnd(14)} ${target}`);
  const rate = (value) => `${value.toFixed(0)} msg/s`;
  console.log('\n@colloquy/store-postgres beside @colloquy/store-sqlite');
  row('workload', 'sqlite', 'postgres', 'target (sqlite)');
  row(
    `sessions.list kinds=[dm,group] limit ${LIST_LIMIT}, p50`,
    ms(sqlite.list),
    ms(postgres.list),
    '<= 5 ms',
  );
  row(`readTail ${TAIL} of ${BIG_TRANSCRIPT}, p50`, ms(sqlite.tail), ms(postgres.tail), '<= 2 ms');
  row(
    `append, ${APPEND_SESSIONS} concurrent writers, 1 msg/call`,
    rate(sqlite.append),
    rate(postgres.append),
    '>= 20,000 msg/s',
  );
  console.log(
    `\nnode ${process.version}, ${cpus().length} CPUs, load average ${loadavg()[0].toFixed(1)} during the run`,
  );
} finally {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}
