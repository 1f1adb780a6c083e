// Benchmarks what OpenTelemetry tracing costs the runtime: CPU time per turn (inbound message ->
// model -> reply sent, zero-latency scripted model) with no SDK registered (the API's no-ops) and with
// the SDK registered, sampling 100% of traces, every span through a batch processor to an exporter
// that drops them, and the metrics SDK with a reader (target: at most 3% more CPU per turn).
//
// Each measurement runs in a fresh process (`--child off|on`), alternating off and on, and the figure
// is the median of the runs; the machine is shared, so the load average is printed beside it.
//
//   node bench/telemetry.mjs [--runs N] [--store sqlite|memory]   (after `pnpm build`)
import { spawnSync } from 'node:child_process';
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
  process.stdout.write(`${JSON.stringify(await measure(arg('--child'), arg('--store', 'sqlite')))}\n`);
  process.exit(0);
}

const runs = Number(arg('--runs', '5'));
const store = arg('--store', 'sqlite');
const results = { off: [], on: [] };
for (let i = 0; i < runs; i++) {
  for (const mode of ['off', 'on']) {
    const child = spawnSync(
      process.execPath,
      [fileURLToPath(import.meta.url), '--child', mode, '--store', store],
      { encoding: 'utf8' },
    );
    if (child.status !== 0) throw new Error(`the ${mode} run failed: ${child.stderr}`);
    const result = JSON.parse(child.stdout.trim().split('\n').at(-1));
    results[mode].push(result);
    console.log(
      `run ${i + 1} ${mode.padEnd(3)}  ${result.cpuMicrosPerTurn.toFixed(1)} µs CPU/turn  ${Math.round(result.turnsPerSecond)} turns/s  ${result.spans} spans  load ${loadavg()[0].toFixed(2)}`,
    );
  }
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const off = median(results.off.map((r) => r.cpuMicrosPerTurn));
const on = median(results.on.map((r) => r.cpuMicrosPerTurn));
console.log(
  `\n${store} store, ${TURNS} turns x ${runs} runs each: off ${off.toFixed(1)} µs/turn, on ${on.toFixed(1)} µs/turn, ` +
    `${(((on - off) / off) * 100).toFixed(1)}% more CPU per turn with tracing at 100% sampling (target <= 3%); ` +
    `load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
);

async function measure(mode, storeKind) {
  let spans = 0;
  let flush = async () => {};
  if (mode === 'on') {
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
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    const tracerProvider = new TracerProvider({
      sampler: new AlwaysOnSampler(),
      spanProcessors: [new BatchSpanProcessor({ exporter: dropSpans })],
    });
    trace.setGlobalTracerProvider(tracerProvider);
    flush = () => tracerProvider.forceFlush();
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
  const { resolveConfig } = await import('@colloquy/core');
  const { MemoryStore } = await import('@colloquy/core/store');
  const { openSqliteStore } = await import('@colloquy/store-sqlite');
  const { createScriptedModel } = await import('@colloquy/testkit');
  const { createRuntime } = await import('../dist/index.js');
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
  const runtime = createRuntime({
    config: resolveConfig({ agents: { defaults: { model: 'scripted/bench' } } }),
    store,
    plugins: [channel],
    models: (ref) => (ref === 'scripted/bench' ? { provider: model, modelId: 'bench' } : undefined),
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
