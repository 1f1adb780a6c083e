// Benchmarks the CPU cost of a turn's spans alone, outside the runtime: the four spans of a plain DM
// turn (`colloquy.inbound`, `invoke_agent`, `chat`, `colloquy.deliver`, with the runtime's attributes),
// started, ended and exported in batches to an exporter that drops them, recorded by
// `createBatchTracerProvider` (`batch`) or by the OpenTelemetry SDK's `TracerProvider` with a
// `BatchSpanProcessor` (`sdk`). Each "turn" also allocates some garbage of its own and yields to the
// event loop now and then, as a runtime does; `none` does only that, and the figures are net of it.
//
// Each measurement runs in a fresh process, the modes alternating; the figure is the median.
//
//   node bench/span-cost.mjs [--runs N]   (after `pnpm build`)
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const WARMUP_TURNS = 50_000;
const TURNS = 200_000;
const MODES = ['none', 'sdk', 'batch'];

if (process.argv[2] === '--child') {
  process.stdout.write(`${await measure(process.argv[3])}\n`);
  process.exit(0);
}

const at = process.argv.indexOf('--runs');
const runs = at === -1 ? 5 : Number(process.argv[at + 1]);
const results = Object.fromEntries(MODES.map((mode) => [mode, []]));
for (let i = 0; i < runs; i++) {
  for (const mode of MODES) {
    const child = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', mode], {
      encoding: 'utf8',
    });
    if (child.status !== 0) throw new Error(`the ${mode} run failed: ${child.stderr}`);
    results[mode].push(Number(child.stdout.trim()));
  }
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const base = median(results.none);
console.log(
  `CPU per turn's four spans, net of the turn's own work (${base.toFixed(2)} µs), median of ${runs} runs: ` +
    MODES.filter((mode) => mode !== 'none')
      .map((mode) => `${mode} ${(median(results[mode]) - base).toFixed(2)} µs`)
      .join(', '),
);

async function measure(mode) {
  const { context, ROOT_CONTEXT, SpanKind, trace } = await import('@opentelemetry/api');
  const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks');
  const { resourceFromAttributes } = await import('@opentelemetry/resources');
  const { AlwaysOnSampler, BatchSpanProcessor, TracerProvider } = await import('@opentelemetry/sdk-trace');
  const { createBatchTracerProvider } = await import('../dist/index.js');
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  let exported = 0;
  const exporter = {
    export(spans, done) {
      exported += spans.length;
      done({ code: 0 });
    },
    shutdown: async () => {},
    forceFlush: async () => {},
  };
  const provider =
    mode === 'sdk'
      ? new TracerProvider({
          sampler: new AlwaysOnSampler(),
          spanProcessors: [new BatchSpanProcessor({ exporter })],
        })
      : createBatchTracerProvider({ exporter, resource: resourceFromAttributes({}) });
  const tracer = provider.getTracer('@colloquy/runtime', '0.1.0');
  let garbage;
  const turn = async (i) => {
    garbage = Array.from({ length: 200 }, (_, k) => ({ k, text: `x${k}` }));
    if (mode === 'none') return await null;
    const session = `agent:main:bench:direct:chat-${i % 100}`;
    const inbound = tracer.startSpan('colloquy.inbound bench', {
      kind: SpanKind.CONSUMER,
      attributes: {
        'colloquy.channel': 'bench',
        'colloquy.chat.type': 'direct',
        'messaging.message.id': `m${i}`,
      },
    });
    const agent = tracer.startSpan(
      'invoke_agent main',
      {
        kind: SpanKind.INTERNAL,
        attributes: {
          'gen_ai.operation.name': 'invoke_agent',
          'gen_ai.agent.name': 'main',
          'gen_ai.conversation.id': session,
          'colloquy.run.id': `r${i}`,
          'colloquy.lane': 'main',
        },
      },
      trace.setSpan(ROOT_CONTEXT, inbound),
    );
    agent.setAttribute('colloquy.tree.id', agent.spanContext().traceId);
    const turnContext = trace.setSpan(ROOT_CONTEXT, agent);
    const chat = tracer.startSpan(
      'chat bench',
      {
        kind: SpanKind.CLIENT,
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': 'scripted',
          'gen_ai.request.model': 'bench',
          'gen_ai.conversation.id': session,
        },
      },
      turnContext,
    );
    await null;
    chat.setAttributes({ 'gen_ai.usage.input_tokens': 20, 'gen_ai.usage.output_tokens': 2 });
    chat.end();
    agent.setAttribute('colloquy.run.status', 'done');
    agent.end();
    const deliver = tracer.startSpan(
      'colloquy.deliver bench',
      {
        kind: SpanKind.PRODUCER,
        attributes: { 'colloquy.channel': 'bench', 'colloquy.delivery.kind': 'reply' },
      },
      turnContext,
    );
    deliver.setAttribute('colloquy.delivery.status', 'sent');
    deliver.end();
    inbound.end();
  };
  const drive = async (turns) => {
    for (let i = 0; i < turns; i++) {
      await turn(i);
      // The event loop turns, so batches are exported as in a runtime.
      if (i % 64 === 0) await new Promise(setImmediate);
    }
  };
  await drive(WARMUP_TURNS);
  const before = process.cpuUsage();
  await drive(TURNS);
  const cpu = process.cpuUsage(before);
  await provider.forceFlush();
  const expected = mode === 'none' ? 0 : (WARMUP_TURNS + TURNS) * 4;
  if (exported !== expected) throw new Error(`${exported} spans were exported, not ${expected}`);
  void garbage;
  return (cpu.user + cpu.system) / TURNS;
}
