// Benchmarks what OpenTelemetry costs the runtime: CPU time per turn (inbound message -> model ->
// reply sent, zero-latency scripted model) with no SDK registered (the API's no-ops), and with the
// SDK registered: `on` is traces (100% sampled, every span through a batch processor to an exporter
// that drops them) and metrics (the metrics SDK with a reader); `traces` and `metrics` register
// one of the two, to show where the cost goes (target: `on` at most 3% more CPU per turn).
//
// Each measurement runs in a fresh process (`--child <mode>`), the modes alternating, and each
// figure is the median of the runs; the machine is shared, so the load average is printed beside it.
//
// `--model scripted` (default) answers in-process at no cost, so a turn is the runtime's own work
// and the overhead is largest. `--model http` is a real provider call: the OpenAI-compatible fake
// in a process of its own (its CPU is not counted), through the AI SDK provider, as a deployed bot
// makes it.
//
//   node bench/telemetry.mjs [--runs N] [--store sqlite|memory] [--model scripted|http]
//                            [--modes off,on,traces,metrics]   (after `pnpm build`; default off,on)
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

if (process.argv.includes('--child')) {
  const result = await measure(arg('--child'), arg('--store', 'sqlite'), arg('--model-url'));
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
const modes = arg('--modes', 'off,on').split(',');
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
        ...(modelServer ? ['--model-url', modelServer.baseURL] : []),
      ],
      { encoding: 'utf8' },
    );
    modelServer?.process.kill();
    if (child.status !== 0) throw new Error(`the ${mode} run failed: ${child.stderr}`);
    const result = JSON.parse(child.stdout.trim().split('\n').at(-1));
    results[mode].push(result);
    console.log(
      `run ${i + 1} ${mode.padEnd(7)}  ${result.cpuMicrosPerTurn.toFixed(1)} µs CPU/turn  ${Math.round(result.turnsPerSecond)} turns/s  ${result.spans} spans  load ${loadavg()[0].toFixed(2)}`,
    );
  }
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const cpu = Object.fromEntries(
  modes.map((mode) => [mode, median(results[mode].map((r) => r.cpuMicrosPerTurn))]),
);
const off = cpu.off ?? Number.NaN;
const more = (mode) => `${(((cpu[mode] - off) / off) * 100).toFixed(1)}%`;
console.log(
  `\n${store} store, ${modelKind} model, ${TURNS} turns x ${runs} runs each, median CPU per turn: ` +
    modes
      .map((mode) => `${mode} ${cpu[mode].toFixed(1)} µs${mode === 'off' ? '' : ` (+${more(mode)})`}`)
      .join(', ') +
    `; target: on <= +3%; load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
);

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

async function measure(mode, storeKind, modelURL) {
  let spans = 0;
  let flush = async () => {};
  const traces = mode === 'on' || mode === 'traces';
  const meters = mode === 'on' || mode === 'metrics';
  if (traces || meters) {
    const { context, metrics, trace } = await import('@opentelemetry/api');
    const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks');
    const { BatchSpanProcessor, TracerProvider, AlwaysOnSampler } = await import('@opentelemetry/sdk-trace');
    const { MeterProvider, PeriodicExportingMetricReader, AggregationTemporality } = await import(
      '@opentelemetry/sdk-metrics'
    );
    const dropSpans = {
      export(batch, done) {
        spans += batch.length;
        done({ code: 0 });
      },
      shutdown: async () => {},
      forceFlush: async () => {},
    };
    if (traces) {
      context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
      const tracerProvider = new TracerProvider({
        sampler: new AlwaysOnSampler(),
        spanProcessors: [new BatchSpanProcessor({ exporter: dropSpans })],
      });
      trace.setGlobalTracerProvider(tracerProvider);
      flush = () => tracerProvider.forceFlush();
    }
    const dropMetrics = {
      export: (_metrics, done) => done({ code: 0 }),
      shutdown: async () => {},
      forceFlush: async () => {},
      selectAggregationTemporality: () => AggregationTemporality.CUMULATIVE,
    };
    if (meters) {
      metrics.setGlobalMeterProvider(
        new MeterProvider({
          readers: [new PeriodicExportingMetricReader({ exporter: dropMetrics, exportIntervalMillis: 1000 })],
        }),
      );
    }
  }
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
  const model = createScriptedModel(() => ({ text: 'ok', usage: { inputTokens: 20, outputTokens: 2 } }));
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
  const drive = (turns, prefix) =>
    Promise.all(
      Array.from({ length: SESSIONS }, async (_, s) => {
        for (let t = 0; t < turns / SESSIONS; t++) await turn(s, `${prefix}-${s}-${t}`);
      }),
    );
  await drive(WARMUP_TURNS, 'w');
  const cpuBefore = process.cpuUsage();
  const start = performance.now();
  await drive(TURNS, 'm');
  const seconds = (performance.now() - start) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  await runtime.shutdown({ drainMs: 1000 });
  await flush();
  rmSync(dir, { recursive: true, force: true });
  return {
    mode,
    cpuMicrosPerTurn: (cpu.user + cpu.system) / TURNS,
    turnsPerSecond: TURNS / seconds,
    spans,
  };
}
