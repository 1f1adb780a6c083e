import {
  type Attributes,
  context,
  diag,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  trace,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  InMemorySpanExporter,
  ParentBasedSampler,
  type ReadableSpan,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  type BatchTracerProviderOptions,
  createBatchTracerProvider,
  type SpanBatchExporter,
} from './batch-tracer-provider.js';
import type { ExportedSpan } from './recorded-span.js';

const resource = resourceFromAttributes({ 'service.name': 'colloquy-test' });

function setup(options: Partial<BatchTracerProviderOptions> = {}) {
  const exporter = new InMemorySpanExporter();
  const provider = createBatchTracerProvider({ exporter, resource, ...options });
  return { exporter, provider, tracer: provider.getTracer('@colloquy/test', '1.2.3') };
}

/** The finished spans, as the SDK's exporter keeps them, by name. */
function byName(exporter: InMemorySpanExporter): Map<string, ReadableSpan> {
  return new Map(exporter.getFinishedSpans().map((span) => [span.name, span]));
}

describe('createBatchTracerProvider', () => {
  beforeAll(() => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  });
  afterAll(() => {
    context.disable();
  });

  it('records a span tree through the active context, and hands it to an SDK exporter', async () => {
    const { exporter, provider, tracer } = setup();
    await tracer.startActiveSpan('invoke_agent main', { kind: SpanKind.INTERNAL }, async (parent) => {
      const child = tracer.startSpan('chat m', {
        kind: SpanKind.CLIENT,
        attributes: { 'gen_ai.request.model': 'm', tags: ['a', 'b'], skipped: undefined },
      });
      child.setAttribute('gen_ai.usage.input_tokens', 20);
      child.addEvent('first chunk', { at: 1 });
      child.setStatus({ code: SpanStatusCode.ERROR, message: 'down' });
      child.end();
      parent.end();
    });
    await provider.forceFlush();
    const spans = byName(exporter);
    const parent = spans.get('invoke_agent main')!;
    const child = spans.get('chat m')!;
    expect(child.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
    expect(child.spanContext().traceId).toBe(parent.spanContext().traceId);
    expect(parent.parentSpanContext).toBeUndefined();
    expect(child).toMatchObject({
      kind: SpanKind.CLIENT,
      attributes: { 'gen_ai.request.model': 'm', tags: ['a', 'b'], 'gen_ai.usage.input_tokens': 20 },
      status: { code: SpanStatusCode.ERROR, message: 'down' },
      events: [{ name: 'first chunk', attributes: { at: 1 } }],
      ended: true,
      instrumentationScope: { name: '@colloquy/test', version: '1.2.3' },
      resource,
    });
    expect(child.spanContext().traceFlags).toBe(TraceFlags.SAMPLED);
    expect(child.spanContext().traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(child.spanContext().spanId).toMatch(/^[0-9a-f]{16}$/);
    const [seconds, nanos] = child.duration;
    expect(seconds * 1e9 + nanos).toBeGreaterThanOrEqual(0);
    expect(child.endTime[0] * 1e9 + child.endTime[1]).toBeGreaterThanOrEqual(
      child.startTime[0] * 1e9 + child.startTime[1],
    );
  });

  it('gives spans the OTLP exporters serialise as the SDK does', async () => {
    const { exporter, provider, tracer } = setup();
    const remote = { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags: 1, isRemote: true };
    const span = tracer.startSpan(
      'colloquy.announce',
      { kind: SpanKind.PRODUCER, links: [{ context: remote, attributes: { 'colloquy.link': 'child-run' } }] },
      trace.setSpanContext(ROOT_CONTEXT, remote),
    );
    span.recordException(new TypeError('bad'));
    span.end();
    await provider.forceFlush();
    const request = JSON.parse(
      new TextDecoder().decode(JsonTraceSerializer.serializeRequest(exporter.getFinishedSpans())),
    );
    const [resourceSpans] = request.resourceSpans;
    expect(resourceSpans.resource.attributes).toContainEqual({
      key: 'service.name',
      value: { stringValue: 'colloquy-test' },
    });
    expect(resourceSpans.scopeSpans[0].scope).toMatchObject({ name: '@colloquy/test', version: '1.2.3' });
    const [otlp] = resourceSpans.scopeSpans[0].spans;
    expect(otlp).toMatchObject({
      traceId: 'a'.repeat(32),
      parentSpanId: 'b'.repeat(16),
      name: 'colloquy.announce',
      kind: 4,
      links: [{ traceId: 'a'.repeat(32), spanId: 'b'.repeat(16) }],
      events: [{ name: 'exception' }],
    });
    expect(otlp.events[0].attributes).toContainEqual({
      key: 'exception.type',
      value: { stringValue: 'TypeError' },
    });
    expect(BigInt(otlp.endTimeUnixNano)).toBeGreaterThanOrEqual(BigInt(otlp.startTimeUnixNano));
  });

  it('drops attribute values the API does not allow, and attributes, events and links past 128', async () => {
    const { exporter, provider, tracer } = setup();
    const span = tracer.startSpan('limits');
    span.setAttributes({ object: { nested: 1 } as never, fn: (() => 1) as never, mixed: [1, {}] as never });
    const many: Attributes = {};
    for (let i = 0; i < 130; i++) many[`a${i}`] = i;
    span.setAttributes(many);
    span.setAttribute('a0', 'overwritten');
    for (let i = 0; i < 130; i++) span.addEvent(`e${i}`);
    for (let i = 0; i < 129; i++) span.addLink({ context: span.spanContext() });
    span.end();
    span.setAttribute('after', 'end');
    await provider.forceFlush();
    const [recorded] = exporter.getFinishedSpans();
    expect(Object.keys(recorded!.attributes)).toHaveLength(128);
    expect(recorded!.attributes.a0).toBe('overwritten');
    expect(recorded!.attributes.after).toBeUndefined();
    expect(recorded!.droppedAttributesCount).toBe(5);
    expect(recorded!.events).toHaveLength(128);
    expect(recorded!.droppedEventsCount).toBe(2);
    expect(recorded!.droppedLinksCount).toBe(1);
  });

  it('keeps the attributes a span starts with as setAttributes would, copied', async () => {
    const { exporter, provider, tracer } = setup();
    const tags = ['a', 'b'];
    const given: Attributes = {
      object: { nested: 1 } as never,
      kept: 'yes',
      '': 'no key',
      absent: undefined,
      tags,
      mixed: [1, {}] as never,
      empty: null as never,
    };
    for (let i = 0; i < 130; i++) given[`a${i}`] = i;
    const span = tracer.startSpan('initial', { attributes: given });
    given.kept = 'changed later';
    tags.push('c');
    span.end();
    await provider.forceFlush();
    const [recorded] = exporter.getFinishedSpans();
    // kept, tags and a0..a125 fill the 128; object, mixed, null and a126..a129 are dropped.
    expect(Object.keys(recorded!.attributes)).toHaveLength(128);
    expect(recorded!.attributes).toMatchObject({ kept: 'yes', tags: ['a', 'b'], a0: 0, a125: 125 });
    const absent = ['object', '', 'absent', 'mixed', 'empty', 'a126'];
    expect(absent.filter((key) => Object.hasOwn(recorded!.attributes, key))).toEqual([]);
    expect(recorded!.droppedAttributesCount).toBe(7);
  });

  it('follows the parent sampled flag by default, and asks a given sampler', async () => {
    const { exporter, provider, tracer } = setup();
    const unsampled = { traceId: 'c'.repeat(32), spanId: 'd'.repeat(16), traceFlags: TraceFlags.NONE };
    const child = tracer.startSpan('child', {}, trace.setSpanContext(ROOT_CONTEXT, unsampled));
    expect(child.isRecording()).toBe(false);
    expect(child.spanContext()).toMatchObject({ traceId: 'c'.repeat(32), traceFlags: TraceFlags.NONE });
    child.end();
    await provider.forceFlush();
    expect(exporter.getFinishedSpans()).toEqual([]);

    const off = setup({ sampler: new AlwaysOffSampler() });
    off.tracer.startSpan('root').end();
    const none = setup({ sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(0) }) });
    none.tracer.startSpan('root').end();
    const all = setup({ sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(1) }) });
    all.tracer.startSpan('root').end();
    await Promise.all([off.provider.forceFlush(), none.provider.forceFlush(), all.provider.forceFlush()]);
    expect(off.exporter.getFinishedSpans()).toEqual([]);
    expect(none.exporter.getFinishedSpans()).toEqual([]);
    expect(all.exporter.getFinishedSpans().map((span) => span.name)).toEqual(['root']);
  });

  it('starts a new trace for a root span, whatever the active context holds', () => {
    const { tracer } = setup();
    const parent = tracer.startSpan('parent');
    const root = tracer.startSpan('run', { root: true }, trace.setSpan(ROOT_CONTEXT, parent));
    expect(root.spanContext().traceId).not.toBe(parent.spanContext().traceId);
  });

  it('keeps the start and end times given, whatever the caller does with them afterwards', () => {
    const { tracer } = setup();
    const start = new Date(1_700_000_000_000);
    const end: [number, number] = [1_700_000_002, 500];
    const span = tracer.startSpan('timed', { startTime: start }) as unknown as ExportedSpan & {
      end(time?: unknown): void;
    };
    expect(span.startTime).toEqual([0, 0]);
    span.end(end);
    start.setTime(0);
    end[0] = 0;
    expect([span.startTime, span.endTime, span.duration]).toEqual([
      [1_700_000_000, 0],
      [1_700_000_002, 500],
      [2, 500],
    ]);
    expect(span.startTime).toBe(span.startTime);
  });

  it('runs startActiveSpan with the span active, its parent untouched', () => {
    const { tracer } = setup();
    const parent = tracer.startSpan('parent');
    const parentContext = trace.setSpan(ROOT_CONTEXT, parent);
    const seen = tracer.startActiveSpan('child', {}, parentContext, (span) => {
      span.end();
      return trace.getActiveSpan();
    });
    expect(seen?.spanContext().traceId).toBe(parent.spanContext().traceId);
    expect(seen).not.toBe(parent);
    expect(trace.getSpan(parentContext)).toBe(parent);
  });

  it('exports a full batch at once, the rest after the delay, and drops spans past the queue', async () => {
    const batches: number[] = [];
    const exporter: SpanBatchExporter = {
      export: (spans, done) => {
        batches.push(spans.length);
        done({ code: 0 });
      },
      shutdown: vi.fn(async () => {}),
    };
    const provider = createBatchTracerProvider({
      exporter,
      resource,
      maxExportBatchSize: 2,
      maxQueueSize: 4,
      scheduledDelayMillis: 50,
    });
    const tracer = provider.getTracer('t');
    for (let i = 0; i < 3; i++) tracer.startSpan(`s${i}`).end();
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches).toEqual([2]);
    await vi.waitFor(() => expect(batches).toEqual([2, 1]));
    for (let i = 0; i < 6; i++) tracer.startSpan(`q${i}`).end();
    expect(provider.droppedSpans).toBe(2);
    await provider.shutdown();
    expect(batches.reduce((sum, n) => sum + n, 0)).toBe(7);
    expect(exporter.shutdown).toHaveBeenCalledOnce();
    tracer.startSpan('late').end();
    expect(provider.droppedSpans).toBe(3);
  });

  it('reports a failed or hung export to the diagnostics logger and goes on', async () => {
    const errors: string[] = [];
    diag.setLogger({
      error: (message) => errors.push(message),
      warn: () => {},
      info: () => {},
      debug: () => {},
      verbose: () => {},
    });
    try {
      let call = 0;
      const exporter: SpanBatchExporter = {
        export: (_spans: ExportedSpan[], done) => {
          call++;
          if (call === 1) done({ code: 1, error: new Error('refused') });
          // The second call never answers.
        },
        shutdown: async () => {},
      };
      const provider = createBatchTracerProvider({ exporter, resource, exportTimeoutMillis: 50 });
      const tracer = provider.getTracer('t');
      tracer.startSpan('one').end();
      await provider.forceFlush();
      tracer.startSpan('two').end();
      await provider.forceFlush();
      expect(errors).toEqual(['1 spans were not exported', '1 spans were not exported']);
    } finally {
      diag.disable();
    }
  });
});
