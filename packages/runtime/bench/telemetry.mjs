// Benchmarks what OpenTelemetry costs the runtime: CPU time per turn (inbound message -> model ->
// reply sent, zero-latency scripted model) with no SDK registered (the API's no-ops), and with
// telemetry registered as the app registers it: `on` is traces (100% sampled, recorded by the
// runtime's `createBatchTracerProvider` and handed in batches to an exporter that drops them) and
// metrics (the metrics SDK with a reader); `traces` and `metrics` register one of the two, to show
// where the cost goes (target: `traces` at most 3% more CPU per turn), `traces-sdk` records the
// same spans with the OpenTelemetry SDK's `TracerProvider` and `BatchSpanProcessor` instead, and
// `loaded` only loads the SDK's modules and registers the context manager.
//
// By default each measurement runs in a fresh process (`--child <mode>`), the modes alternating, and
// each figure is the median of the runs. On a shared virtual machine the CPU time of one process
// varies by 10 to 50% from one minute to the next, which hides a few percent. `--paired` measures
// inside each process instead: a runtime created before `mode` is registered and one created after,
// driven in 40 alternating blocks of 500 turns; the figure is the median block pair, then the
// median over runs; the ratio of the two CPU totals is printed beside it. The two runtimes share
// the heap and the JIT, so the paired figures can also undercount (garbage from the traced blocks
// may be collected in the plain ones).
//
// `--model scripted` (default) answers in-process at no cost, so a turn is the runtime's own work
// and the overhead is largest. `--model http` is a real provider call: the OpenAI-compatible fake
// in a process of its own (its CPU is not counted), through the AI SDK provider, as a deployed bot
// makes it.
//
//   node bench/telemetry.mjs [--paired] [--runs N] [--store sqlite|memory] [--model scripted|http]
//                            [--modes off,loaded,traces,on,metrics,traces-sdk]
//                            (after `pnpm build`; default off,traces,on, or traces,on paired)
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const arg = (name, fallback) => {
  const at = process.argv.indexOf(name);
  return at === -1 ? fallback : process.argv[at + 1];
};
const SESSIONS = 100;
const WARMUP_TURNS = 3000;
const TURNS = 10_000;
const PAIRED_BLOCKS = 40;
const PAIRED_BLOCK_TURNS = 500;

if (process.argv.includes('--child')) {
  const run = process.argv.includes('--paired') ? measurePaired : measure;
  const result = await run(arg('--child'), arg('--store', 'sqlite'), arg('--model-url'));
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(0);
}
if (process.argv.includes('--serve-model')) {
  const { fakeReply, startOpenAIFake } = await import('@colloquy/testkit/openai-fake');
  const fake = await startOpenAIFake(() => fakeReply.text('ok'));
  process.stdout.write(`${fake.baseURL}\n`);
  await new Promise(() => {}); // serves until the parent kills it
}

const runs = Number(arg('--runs', '5'));
const store = arg('--store', 'sqlite');
const paired = process.argv.includes('--paired');
const modes = arg('--modes', paired ? 'traces,on' : 'off,traces,on').split(',');
const modelKind = arg('--model', 'scripted');
const results = Object.fromEntries(modes.map((mode) => [mode, []]));
for (let i = 0; i < runs; i++) {
  for (const mode of modes) {
    // A fake of its own per run: the fake keeps every request it answered.
    const modelServer = modelKind === 'http' ? await serveModel() : undefined;
    const child = spawnSync(
      process.execPath,
      [
        fileURLToPath(import.meta.url),
        '--child',
        mode,
        '--store',
        store,
        ...(paired ? ['--paired'] : []),
        ...(modelServer ? ['--model-url', modelServer.baseURL] : []),
      ],
      { encoding: 'utf8' },
    );
    modelServer?.process.kill();
    if (child.status !== 0) throw new Error(`the ${mode} run failed: ${child.stderr}`);
    const result = JSON.parse(child.stdout.trim().split('\n').at(-1));
    results[mode].push(result);
    const figures = paired
      ? `off ${result.plainMicrosPerTurn.toFixed(1)} µs, ${mode} ${result.cpuMicrosPerTurn.toFixed(1)} µs CPU/turn, median pair +${(result.pairedOverhead * 100).toFixed(1)}%, totals ${percentMore(result.cpuMicrosPerTurn, result.plainMicrosPerTurn)}`
      : `${result.cpuMicrosPerTurn.toFixed(1)} µs CPU/turn  ${Math.round(result.turnsPerSecond)} turns/s`;
    console.log(
      `run ${i + 1} ${mode.padEnd(7)}  ${figures}  ${result.spans} spans  load ${loadavg()[0].toFixed(2)}`,
    );
  }
}
const load = `load average ${loadavg()
  .map((l) => l.toFixed(2))
  .join(' ')}`;
if (paired) {
  // Each run's own pair, then the median of the runs' overheads.
  // Two estimates of one run's overhead: the median block pair (robust to a slow moment of the
  // machine) and the ratio of the CPU totals (what "CPU per turn" means; it also charges each side
  // the garbage collections that happened to land in its blocks). Then the median over runs.
  const overhead = (mode) => median(results[mode].map((r) => r.pairedOverhead));
  const totals = (mode) => median(results[mode].map((r) => r.cpuMicrosPerTurn / r.plainMicrosPerTurn - 1));
  console.log(
    `\n${store} store, ${modelKind} model, paired in each process (${PAIRED_BLOCKS} x ${PAIRED_BLOCK_TURNS} turns each way), ${runs} runs, median CPU per turn over off: ` +
      modes
        .map(
          (mode) =>
            `${mode} +${(overhead(mode) * 100).toFixed(1)}% (median pair), +${(totals(mode) * 100).toFixed(1)}% (totals)`,
        )
        .join(', ') +
      `; target: traces <= +3%; ${load}`,
  );
} else {
  const cpu = Object.fromEntries(
    modes.map((mode) => [mode, median(results[mode].map((r) => r.cpuMicrosPerTurn))]),
  );
  console.log(
    `\n${store} store, ${modelKind} model, ${TURNS} turns x ${runs} runs each, median CPU per turn: ` +
      modes
        .map(
          (mode) =>
            `${mode} ${cpu[mode].toFixed(1)} µs${mode === 'off' ? '' : ` (${percentMore(cpu[mode], cpu.off ?? Number.NaN)})`}`,
        )
        .join(', ') +
      `; target: traces <= +3%; ${load}`,
  );
}

function median(values) {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
}

function percentMore(value, base) {
  return `+${(((value - base) / base) * 100).toFixed(1)}%`;
}

/** Starts the OpenAI-compatible fake in a process of its own; resolves with its base URL. */
function serveModel() {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--serve-model'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the model fake exited (${code}) before it listened`)));
    child.stdout.once('data', (line) => resolve({ baseURL: String(line).trim(), process: child }));
  });
}

/**
 * Registers what `mode` measures with `@opentelemetry/api`; resolves with a flush and the count of
 * spans the exporter took.
 */
async function registerTelemetry(mode) {
  const counted = { spans: 0, flush: async () => {} };
  const traces = mode === 'on' || mode === 'traces' || mode === 'traces-sdk';
  const meters = mode === 'on' || mode === 'metrics';
  const loadedOnly = mode === 'loaded';
  if (!traces && !meters && !loadedOnly) return counted;
  const { context, metrics, trace } = await import('@opentelemetry/api');
  const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks');
  const { resourceFromAttributes } = await import('@opentelemetry/resources');
  const { BatchSpanProcessor, TracerProvider, AlwaysOnSampler } = await import('@opentelemetry/sdk-trace');
  const { MeterProvider, PeriodicExportingMetricReader, AggregationTemporality } = await import(
    '@opentelemetry/sdk-metrics'
  );
  const dropSpans = {
    export(batch, done) {
      counted.spans += batch.length;
      done({ code: 0 });
    },
    shutdown: async () => {},
    forceFlush: async () => {},
  };
  // `loaded`: the SDK's modules loaded and the context manager registered, nothing traced.
  if (loadedOnly) context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  if (traces) {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    const { createBatchTracerProvider } = await import('../dist/index.js');
    const tracerProvider =
      mode === 'traces-sdk'
        ? new TracerProvider({
            sampler: new AlwaysOnSampler(),
            spanProcessors: [new BatchSpanProcessor({ exporter: dropSpans })],
          })
        : createBatchTracerProvider({ exporter: dropSpans, resource: resourceFromAttributes({}) });
    trace.setGlobalTracerProvider(tracerProvider);
    counted.flush = () => tracerProvider.forceFlush();
  }
  if (meters) {
    const dropMetrics = {
      export: (_metrics, done) => done({ code: 0 }),
      shutdown: async () => {},
      forceFlush: async () => {},
      selectAggregationTemporality: () => AggregationTemporality.CUMULATIVE,
    };
    metrics.setGlobalMeterProvider(
      new MeterProvider({
        readers: [new PeriodicExportingMetricReader({ exporter: dropMetrics, exportIntervalMillis: 1000 })],
      }),
    );
  }
  return counted;
}

/** A started runtime on its own store and bench channel, and how to drive turns through it. */
async function startBenchRuntime(storeKind, modelURL) {
  const { resolveConfig } = await import('@colloquy/core');
  const { MemoryStore } = await import('@colloquy/core/store');
  const { openSqliteStore } = await import('@colloquy/store-sqlite');
  const { createScriptedModel } = await import('@colloquy/testkit');
  const { createModelRouter, createRuntime } = await import('../dist/index.js');
  const { benchInbound, createBenchChannel } = await import('./bench-channel.mjs');
  const dir = mkdtempSync(join(tmpdir(), 'colloquy-telemetry-bench-'));
  const store =
    storeKind === 'memory'
      ? new MemoryStore()
      : openSqliteStore({
          file: join(dir, 'colloquy.db'),
          groupCommit: true,
          walAutocheckpointPages: 10_000,
          detectNestedCalls: false,
        });
  const model = createScriptedModel(() => ({ text: 'ok', usage: { inputTokens: 20, outputTokens: 2 } }), {
    keepRequests: 0,
  });
  const channel = createBenchChannel();
  const config = resolveConfig(
    modelURL
      ? {
          agents: { defaults: { model: 'local/bench' } },
          models: { providers: { local: { kind: 'openai-compatible', baseURL: modelURL } } },
        }
      : { agents: { defaults: { model: 'scripted/bench' } } },
  );
  const runtime = createRuntime({
    config,
    store,
    plugins: [channel],
    models: modelURL
      ? createModelRouter(config)
      : (ref) => (ref === 'scripted/bench' ? { provider: model, modelId: 'bench' } : undefined),
  });
  await runtime.start();
  const turn = async (session, text) => {
    const reply = channel.nextReply(`chat-${session}`);
    await runtime.receive(benchInbound(session, text));
    await reply;
  };
  let driven = 0;
  return {
    /** Runs `turns` turns, SESSIONS chats at a time; resolves with the CPU microseconds they took. */
    async drive(turns) {
      const prefix = `d${driven++}`;
      const cpuBefore = process.cpuUsage();
      await Promise.all(
        Array.from({ length: SESSIONS }, async (_, s) => {
          for (let t = 0; t < turns / SESSIONS; t++) await turn(s, `${prefix}-${s}-${t}`);
        }),
      );
      const cpu = process.cpuUsage(cpuBefore);
      return cpu.user + cpu.system;
    },
    async stop() {
      await runtime.shutdown({ drainMs: 1000 });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Paired: a runtime created before `mode` is registered (so it never traces) and one created after,
 * in one process, driven in alternating blocks (A B B A ...); both share the JIT, the heap and the
 * machine's state at each moment, so their difference is what `mode` costs, with less of the noise
 * between processes.
 */
async function measurePaired(mode, storeKind, modelURL) {
  const plain = await startBenchRuntime(storeKind, modelURL);
  const telemetry = await registerTelemetry(mode);
  const traced = await startBenchRuntime(storeKind, modelURL);
  await plain.drive(WARMUP_TURNS);
  await traced.drive(WARMUP_TURNS);
  const cpu = { plain: 0, traced: 0 };
  const ratios = [];
  for (let block = 0; block < PAIRED_BLOCKS; block++) {
    const order = block % 2 === 0 ? ['plain', 'traced'] : ['traced', 'plain'];
    const pair = {};
    for (const which of order) {
      pair[which] = await (which === 'plain' ? plain : traced).drive(PAIRED_BLOCK_TURNS);
    }
    cpu.plain += pair.plain;
    cpu.traced += pair.traced;
    ratios.push(pair.traced / pair.plain);
  }
  await plain.stop();
  await traced.stop();
  await telemetry.flush();
  const turns = PAIRED_BLOCKS * PAIRED_BLOCK_TURNS;
  return {
    mode,
    plainMicrosPerTurn: cpu.plain / turns,
    cpuMicrosPerTurn: cpu.traced / turns,
    // The median pair: a block that met a slow moment of the machine moves it little.
    pairedOverhead: median(ratios) - 1,
    spans: telemetry.spans,
  };
}

async function measure(mode, storeKind, modelURL) {
  const telemetry = await registerTelemetry(mode);
  const bench = await startBenchRuntime(storeKind, modelURL);
  await bench.drive(WARMUP_TURNS);
  const start = performance.now();
  const cpu = await bench.drive(TURNS);
  const seconds = (performance.now() - start) / 1000;
  await bench.stop();
  await telemetry.flush();
  return {
    mode,
    cpuMicrosPerTurn: cpu / TURNS,
    turnsPerSecond: TURNS / seconds,
    spans: telemetry.spans,
  };
}
