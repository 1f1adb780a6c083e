// Benchmarks transcript search and paging in @colloquy/store-postgres (a throwaway local server, as
// in the tests): searchMessages (what sessions_search calls) over 1,000 sessions holding 500,000
// messages, p50 of a two-word query with limit 10 (hits and the match count), target <= 20 ms; and
// readTail 20 at an offset deep in a 50,000-message transcript (sessions_history paging), <= 2 ms.
// The data is the store-sqlite search benchmark's. COLLOQUY_BENCH_SEARCH_MESSAGES sets a smaller
// total for a quicker run; `--strict` exits 1 when a target is missed.

import { startTestPostgres } from '@colloquy/testkit/postgres';
import { Bench } from 'tinybench';
import { benchSearches, message, seedSearchStore, session } from '../../store-sqlite/bench/search-data.mjs';
import { openPostgresStore } from '../dist/index.js';

const SESSIONS = 1_000;
const TOTAL = Number(process.env.COLLOQUY_BENCH_SEARCH_MESSAGES ?? 500_000);
const PER_SESSION = Math.ceil(TOTAL / SESSIONS);
const BIG = 50_000;

async function p50(fn, time = 1500) {
  const bench = new Bench({ time, warmupTime: 300, warmupIterations: 5 });
  bench.add('x', fn);
  await bench.run();
  return bench.tasks[0].result.latency.p50;
}

const server = await startTestPostgres();
let missed = 0;
try {
  const store = await openPostgresStore({ url: await server.createDatabase() });
  const seedSeconds = await seedSearchStore(store, SESSIONS, PER_SESSION);
  await store.sql('ANALYZE');
  const rows = [];
  const row = (workload, value, target, ok) => {
    if (ok === false) missed++;
    rows.push([workload, value, target, ok === undefined ? '' : ok ? 'yes' : 'NO']);
  };
  const msText = (v) => `${v.toFixed(3)} ms`;
  await benchSearches(store, p50, row);
  await store.putSession(session('agent:main:big', 0));
  for (let start = 0; start < BIG; start += 1000) {
    const batch = Array.from({ length: 1000 }, (_, i) => message(start + i));
    await store.appendMessages('agent:main:big', batch);
  }
  const deep = await p50(() => store.readTail('agent:main:big', 20, { offset: 45_000 }));
  const newest = await p50(() => store.readTail('agent:main:big', 20));
  row(`readTail 20 at offset 45,000 of ${BIG}`, msText(deep), 'p50 <= 2 ms', deep <= 2);
  row(`readTail 20 at offset 0 of ${BIG}`, msText(newest), '(info)');
  row('seeding 1,000 sessions in transactions of one session', `${seedSeconds.toFixed(1)} s`, '(info)');
  await store.close();
  const head = ['workload', 'result', 'target', 'ok'];
  const widths = [0, 1, 2, 3].map((c) => Math.max(...[head, ...rows].map((r) => r[c].length)));
  for (const r of [head, ...rows]) {
    process.stdout.write(`${r.map((cell, c) => cell.padEnd(widths[c])).join('  ')}\n`);
  }
  if (missed > 0) process.stdout.write(`${missed} target(s) missed\n`);
} finally {
  await server.stop();
}
if (missed > 0 && process.argv.includes('--strict')) process.exitCode = 1;
