// The runtime on PostgreSQL: turns/s of 100 sessions in parallel (zero-latency scripted model), with
// the CPU each turn costs the runtime's process and the PostgreSQL server, and the round trips it
// makes, for the store's own turn operations (`native`) against core's defaults built on the row-level
// calls (`rows`, the store as it was before). Shapes alternate, so the machine's load falls on both.
// `node bench/turns-postgres.mjs [runs]` (default 5; BENCH_WARMUP_TURNS, BENCH_TURNS_PER_SESSION);
// each figure is the median with min-max.
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { resolveConfig } from '@colloquy/core';
import { openPostgresStore } from '@colloquy/store-postgres';
import { createScriptedModel } from '@colloquy/testkit';
import { startRoundTripCounter, startTestPostgres } from '@colloquy/testkit/postgres';
import { createRuntime } from '../dist/index.js';
import { createBenchChannel, benchInbound as inbound } from './bench-channel.mjs';

const RUNS = Number(process.argv[2] ?? 5);
const SESSIONS = 100;
const WARMUP_TURNS = Number(process.env.BENCH_WARMUP_TURNS ?? 2000);
const TURNS_PER_SESSION = Number(process.env.BENCH_TURNS_PER_SESSION ?? 40);
const TURN_OPERATIONS = new Set(['commitInbound', 'endTurn', 'recordDeliveries']);
const TICKS_PER_SECOND = 100;
/** `BENCH_COUNT_ROUND_TRIPS=1`: the store connects through a relay that counts round trips (it costs CPU). */
const COUNT_ROUND_TRIPS = process.env.BENCH_COUNT_ROUND_TRIPS === '1';
/** Turns of one chat, one at a time with the session idle when each message arrives (round trips counted). */
const IDLE_TURNS = 50;

/** The store with its own turn operations hidden, so the runtime uses core's defaults. */
function withoutTurnOperations(store) {
  return new Proxy(store, {
    get(target, name) {
      if (TURN_OPERATIONS.has(name)) return undefined;
      const value = Reflect.get(target, name, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** CPU seconds of the server: the postmaster and every process it started. */
function serverCpuSeconds(postmaster) {
  let ticks = 0;
  for (const pid of [postmaster, ...childrenOf(postmaster)]) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
    } catch {
      // The process ended meanwhile.
    }
  }
  return ticks / TICKS_PER_SECOND;
}

function childrenOf(pid) {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
  } catch {
    return [];
  }
}

async function postmasterOf(url) {
  const store = await openPostgresStore({ url });
  const rows = await store.sql('SELECT pg_backend_pid() AS pid');
  await store.close();
  const status = readFileSync(`/proc/${rows[0].pid}/status`, 'utf8');
  return status.match(/^PPid:\s+(\d+)/m)[1];
}

async function run(server, postmaster, shape) {
  const url = await server.createDatabase();
  const counter = COUNT_ROUND_TRIPS ? await startRoundTripCounter(url) : undefined;
  const opened = await openPostgresStore({ url: counter?.url ?? url });
  const store = shape === 'rows' ? withoutTurnOperations(opened) : opened;
  const model = createScriptedModel(() => ({ text: 'ok', usage: { inputTokens: 20, outputTokens: 2 } }), {
    keepRequests: 0,
  });
  const channel = createBenchChannel();
  const runtime = createRuntime({
    config: resolveConfig({ agents: { defaults: { model: 'scripted/bench' } } }),
    store,
    plugins: [channel],
    models: (ref) => (ref === 'scripted/bench' ? { provider: model, modelId: 'bench' } : undefined),
  });
  await runtime.start();
  const turns = async (prefix, count) =>
    Promise.all(
      Array.from({ length: SESSIONS }, async (_, s) => {
        for (let t = 0; t < count; t++) {
          const reply = channel.nextReply(`chat-${s}`);
          await runtime.receive(inbound(s, `${prefix}-${s}-${t}`));
          await reply;
        }
      }),
    );
  await turns('w', Math.ceil(WARMUP_TURNS / SESSIONS));
  counter?.reset();
  const cpu = process.cpuUsage();
  const serverCpu = serverCpuSeconds(postmaster);
  const start = performance.now();
  await turns('m', TURNS_PER_SESSION);
  const seconds = (performance.now() - start) / 1000;
  const used = process.cpuUsage(cpu);
  const serverSeconds = serverCpuSeconds(postmaster) - serverCpu;
  const roundTrips = counter?.count() ?? Number.NaN;
  const count = SESSIONS * TURNS_PER_SESSION;
  // The closed loop above sends a chat's next message as soon as its reply is sent, while the turn
  // that sent it is still finishing: that message waits `queued` and its turn begins apart. A chat
  // user takes longer than that, so their message finds the session idle: counted here.
  let idleRoundTrips = Number.NaN;
  if (counter) {
    // What the loop left to finish first: until no round trip is made for 300 ms.
    for (let before = -1; before !== counter.count(); ) {
      before = counter.count();
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    counter.reset();
    for (let t = 0; t < IDLE_TURNS; t++) {
      const reply = channel.nextReply('chat-0');
      await runtime.receive(inbound(0, `idle-${t}`));
      await reply;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    idleRoundTrips = counter.count() / IDLE_TURNS;
  }
  await runtime.shutdown({ drainMs: 1000 });
  // The runtime does not own the store: left open, its pool keeps the process from exiting.
  await opened.close();
  await counter?.close();
  return {
    perSecond: count / seconds,
    appMsPerTurn: (used.user + used.system) / 1000 / count,
    serverMsPerTurn: (serverSeconds * 1000) / count,
    roundTripsPerTurn: roundTrips / count,
    idleRoundTripsPerTurn: idleRoundTrips,
    load: loadavg()[0],
  };
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const m = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return `${m.toFixed(2)} (${sorted[0].toFixed(2)}-${sorted[sorted.length - 1].toFixed(2)})`;
}

const server = await startTestPostgres();
const postmaster = await postmasterOf(await server.createDatabase());
console.log(
  `runtime on PostgreSQL: ${SESSIONS} sessions x ${TURNS_PER_SESSION} turns after ${WARMUP_TURNS} warm-up turns, zero-latency model, ${RUNS} runs per shape; load ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
const results = { rows: [], native: [] };
for (let i = 0; i < RUNS; i++) {
  for (const shape of ['rows', 'native']) {
    const r = await run(server, postmaster, shape);
    results[shape].push(r);
    console.log(
      `  ${shape.padEnd(6)} run ${i + 1}: ${r.perSecond.toFixed(0)} turns/s, app ${r.appMsPerTurn.toFixed(3)} ms CPU/turn, server ${r.serverMsPerTurn.toFixed(3)} ms CPU/turn,${COUNT_ROUND_TRIPS ? ` ${r.roundTripsPerTurn.toFixed(2)} round trips/turn (${r.idleRoundTripsPerTurn.toFixed(2)} when idle),` : ''} load ${r.load.toFixed(2)}`,
    );
  }
}
const roundTripsColumn = COUNT_ROUND_TRIPS ? ' round trips/turn | round trips/turn, session idle |' : '';
console.log(
  `\n| store turn operations | turns/s | app CPU ms/turn | server CPU ms/turn |${roundTripsColumn} load (1 min) |`,
);
console.log(`|---|---|---|---|${COUNT_ROUND_TRIPS ? '---|---|' : ''}---|`);
for (const [shape, rs] of Object.entries(results)) {
  console.log(
    `| ${shape === 'rows' ? "core's defaults (before)" : 'native (after)'} | ${median(rs.map((r) => r.perSecond))} | ${median(rs.map((r) => r.appMsPerTurn))} | ${median(rs.map((r) => r.serverMsPerTurn))} |${COUNT_ROUND_TRIPS ? ` ${median(rs.map((r) => r.roundTripsPerTurn))} | ${median(rs.map((r) => r.idleRoundTripsPerTurn))} |` : ''} ${median(rs.map((r) => r.load))} |`,
  );
}
await server.stop();
