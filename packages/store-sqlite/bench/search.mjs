// Benchmarks transcript search and paging in @colloquy/store-sqlite:
// - searchMessages (what sessions_search calls) over 1,000 sessions holding 500,000 messages: p50 of
//   a two-word query with limit 10 (hits and the match count, as the tool needs), target <= 20 ms;
// - append throughput with and without the FTS index, in the same run (indexing may cost <= 25%):
//   appends index at search time, so "with" includes the search that indexes every appended message,
//   and both sides end with a checkpoint (see appendRates);
// - readTail 20 at an offset deep in a 50,000-message transcript (sessions_history paging), <= 2 ms.
// Set COLLOQUY_BENCH_SEARCH_MESSAGES to a smaller total for a quicker run. `--strict` exits 1 when a
// target is missed. Run with `pnpm bench` at the root or `node bench/search.mjs`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Bench } from 'tinybench';
import { openSqliteStore } from '../dist/index.js';
import { benchSearches, message, seedSearchStore, session } from './search-data.mjs';

const SESSIONS = 1_000;
const TOTAL = Number(process.env.COLLOQUY_BENCH_SEARCH_MESSAGES ?? 500_000);
const PER_SESSION = Math.ceil(TOTAL / SESSIONS);
const BIG = 50_000;
const APPEND = 20_000;
const dir = mkdtempSync(join(tmpdir(), 'colloquy-search-bench-'));

async function p50(fn, time = 1500) {
  const bench = new Bench({ time, warmupTime: 200, warmupIterations: 3 });
  bench.add('x', fn);
  await bench.run();
  return bench.tasks[0].result.latency.p50;
}

/**
 * Messages per second appending one message per call to 100 sessions, with and without the index
 * (median of 3 runs each, the two alternating so that drift in machine load hits both alike).
 * Every run ends with the store's data in the database file (a WAL checkpoint), so both sides are
 * timed to the same state: without it the "with" side would also pay for copying the appends' log
 * into the file (its indexing commit reaches SQLite's auto-checkpoint) while the "without" side
 * leaves that copy to `close`, outside the timer. The process's CPU time is measured too: on a
 * loaded machine it is steadier than the wall clock, which then mostly measures waiting.
 */
async function appendRates(groupCommit = false) {
  const rates = { with: [], without: [], cpuWith: [], cpuWithout: [] };
  const cpuMs = () => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  };
  for (let run = 0; run < 3; run++) {
    for (const withIndex of [true, false]) {
      const file = join(dir, `append-${withIndex}-${groupCommit}-${run}.db`);
      const store = openSqliteStore({ file, groupCommit });
      for (let s = 0; s < 100; s++) await store.putSession(session(`agent:main:dm:${s}`, s));
      const messages = Array.from({ length: APPEND }, (_, i) => message(i));
      const started = performance.now();
      const cpuStarted = cpuMs();
      for (let i = 0; i < APPEND; i++) await store.appendMessages(`agent:main:dm:${i % 100}`, [messages[i]]);
      // With the index, the time includes indexing every appended message: the first search does it.
      if (withIndex) await store.searchMessages({ text: 'indexing catch up', limit: 1 });
      await store.flush();
      await store.checkpoint();
      rates[withIndex ? 'with' : 'without'].push(APPEND / ((performance.now() - started) / 1000));
      rates[withIndex ? 'cpuWith' : 'cpuWithout'].push(APPEND / ((cpuMs() - cpuStarted) / 1000));
      await store.close();
    }
  }
  const median = (values) => values.sort((a, b) => a - b)[1];
  return {
    with: median(rates.with),
    without: median(rates.without),
    cpuWith: median(rates.cpuWith),
    cpuWithout: median(rates.cpuWithout),
  };
}

const rows = [];
let missed = 0;
const row = (workload, value, target, ok) => {
  if (ok === false) missed++;
  rows.push([workload, value, target, ok === undefined ? '' : ok ? 'yes' : 'NO']);
};
const msText = (v) => `${v.toFixed(3)} ms`;

try {
  const store = openSqliteStore({ file: join(dir, 'search.db') });
  const seedSeconds = await seedSearchStore(store, SESSIONS, PER_SESSION);
  process.stdout.write(`seeded in ${seedSeconds.toFixed(1)} s\n`);

  await benchSearches(store, p50, row);

  process.stdout.write(`seeding a ${BIG}-message transcript...\n`);
  await store.putSession(session('agent:main:big', 0));
  for (let start = 0; start < BIG; start += 1000) {
    const batch = Array.from({ length: 1000 }, (_, i) => message(start + i));
    await store.transaction((tx) => tx.appendMessages('agent:main:big', batch));
  }
  const newest = await p50(() => store.readTail('agent:main:big', 20));
  const deep = await p50(() => store.readTail('agent:main:big', 20, { offset: 45_000 }));
  row(`readTail 20 at offset 45,000 of ${BIG}`, msText(deep), 'p50 <= 2 ms', deep <= 2);
  row(`readTail 20 at offset 0 of ${BIG}`, msText(newest), '(info)');
  await store.close();

  process.stdout.write('appending with and without the search index (3 runs each, median)...\n');
  const { with: withIndex, without: withoutIndex, cpuWith, cpuWithout } = await appendRates();
  const cost = 1 - withIndex / withoutIndex;
  const perSecond = (v) => `${Math.round(v).toLocaleString('en')} msg/s`;
  row('append, 100 sessions, 1 msg/call, with FTS index', perSecond(withIndex), '(info)');
  row('append, 100 sessions, 1 msg/call, without FTS index', perSecond(withoutIndex), '(info)');
  row('  cost of indexing', `${(cost * 100).toFixed(1)}%`, '<= 25%', cost <= 0.25);
  row(
    '  same, in CPU time (messages per CPU second)',
    `${((1 - cpuWith / cpuWithout) * 100).toFixed(1)}%`,
    '(info)',
  );
  const { with: groupWith, without: groupWithout } = await appendRates(true);
  row('append, same, group commit, with FTS index', perSecond(groupWith), '(info)');
  row('append, same, group commit, without FTS index', perSecond(groupWithout), '(info)');
  row(
    '  cost of indexing with group commit',
    `${((1 - groupWith / groupWithout) * 100).toFixed(1)}%`,
    '(info)',
  );
  row('seeding 1,000 sessions in transactions of one session', `${seedSeconds.toFixed(1)} s`, '(info)');

  const widths = [0, 1, 2, 3].map((c) =>
    Math.max(...[['workload', 'result', 'target', 'ok'], ...rows].map((r) => r[c].length)),
  );
  for (const r of [['workload', 'result', 'target', 'ok'], ...rows]) {
    process.stdout.write(`${r.map((cell, c) => cell.padEnd(widths[c])).join('  ')}\n`);
  }
  if (missed > 0) process.stdout.write(`${missed} target(s) missed\n`);
  if (missed > 0 && process.argv.includes('--strict')) process.exitCode = 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
