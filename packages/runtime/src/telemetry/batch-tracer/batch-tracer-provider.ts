import {
  type Context,
  context,
  diag,
  INVALID_TRACEID,
  type Sampler,
  SamplingDecision,
  type SamplingResult,
  type Span,
  type SpanContext,
  SpanKind,
  type SpanOptions,
  TraceFlags,
  type Tracer,
  type TracerOptions,
  type TracerProvider,
  trace,
} from '@opentelemetry/api';
import { linkedContext } from '../linked-context.js';
import { type ExportedSpan, RecordedSpan, type SpanResource, type SpanScope } from './recorded-span.js';
import { SpanIds } from './span-ids.js';

/** The default sampler's two answers, shared (a sampling result is only read). */
const SAMPLED: SamplingResult = { decision: SamplingDecision.RECORD_AND_SAMPLED };
const NOT_SAMPLED: SamplingResult = { decision: SamplingDecision.NOT_RECORD };

/** `ExportResultCode.SUCCESS` of `@opentelemetry/core`. */
const EXPORT_SUCCESS = 0;

/**
 * Where ended spans go, a batch at a time: an OpenTelemetry span exporter (`OTLPTraceExporter`, the
 * SDK's `InMemorySpanExporter`, ...) fits.
 */
export interface SpanBatchExporter {
  export(spans: ExportedSpan[], done: (result: { code: number; error?: Error }) => void): void;
  shutdown(): Promise<void>;
  forceFlush?(): Promise<void>;
}

/** How {@link createBatchTracerProvider} samples, batches and exports. */
export interface BatchTracerProviderOptions {
  /** Takes the sampled spans once ended, in batches. */
  exporter: SpanBatchExporter;
  /** The resource every span carries (the SDK's `Resource`, with `service.name`). */
  resource: SpanResource;
  /**
   * Decides which spans are recorded and exported (an SDK sampler such as
   * `ParentBasedSampler(TraceIdRatioBasedSampler(r))` fits). Default: a span follows its parent's
   * sampled flag, and a root span is sampled.
   */
  sampler?: Sampler;
  /** Spans per export call. Default 512. */
  maxExportBatchSize?: number;
  /** Ended spans held for export at most; more are dropped (and counted). Default 2048. */
  maxQueueSize?: number;
  /** How long an ended span waits for a batch to fill before it is exported anyway. Default 5,000 ms. */
  scheduledDelayMillis?: number;
  /** How long one export may take before it counts as failed. Default 30,000 ms. */
  exportTimeoutMillis?: number;
}

/** A tracer provider with its export pipeline. */
export interface BatchTracerProvider extends TracerProvider {
  /** Exports every ended span held, and waits for the exports under way. */
  forceFlush(): Promise<void>;
  /** Flushes, then shuts the exporter down; spans ended later are dropped. */
  shutdown(): Promise<void>;
  /** Spans dropped because the queue was full or the provider shut down. */
  readonly droppedSpans: number;
}

/**
 * A tracer provider for `@opentelemetry/api` that records spans and hands the sampled ones, ended, to
 * an OpenTelemetry span exporter in batches: what the SDK's `TracerProvider` with a
 * `BatchSpanProcessor` does, for a fraction of its CPU per span. It checks attribute values by their
 * type instead of walking them, creates ids from a pool of random bytes, and calls the sampler only
 * when one is given. It has no span processors, span limits other than 128 attributes, events and
 * links per span, or self-metrics; for those, register the SDK's provider instead.
 *
 * @param options - the exporter, the resource, and optionally a sampler and batch sizes
 * @returns the provider; register it with `trace.setGlobalTracerProvider`
 * @example
 * ```ts
 * const provider = createBatchTracerProvider({
 *   exporter: new OTLPTraceExporter(),
 *   resource: resourceFromAttributes({ 'service.name': 'my-bot' }),
 * });
 * trace.setGlobalTracerProvider(provider);
 * ```
 */
export function createBatchTracerProvider(options: BatchTracerProviderOptions): BatchTracerProvider {
  const batches = new SpanBatches(options);
  const ids = new SpanIds();
  const tracers = new Map<string, Tracer>();
  return {
    getTracer(name: string, version?: string, tracerOptions?: TracerOptions): Tracer {
      const key = `${name}@${version ?? ''}:${tracerOptions?.schemaUrl ?? ''}`;
      let tracer = tracers.get(key);
      if (!tracer) {
        const scope: SpanScope = {
          name,
          ...(version !== undefined ? { version } : {}),
          ...(tracerOptions?.schemaUrl !== undefined ? { schemaUrl: tracerOptions.schemaUrl } : {}),
        };
        tracer = new BatchTracer(scope, ids, batches, options);
        tracers.set(key, tracer);
      }
      return tracer;
    },
    forceFlush: () => batches.flush(),
    shutdown: () => batches.shutdown(),
    get droppedSpans() {
      return batches.dropped;
    },
  };
}

/** One instrumentation scope's tracer. */
class BatchTracer implements Tracer {
  private readonly onEnd: (span: RecordedSpan) => void;

  constructor(
    private readonly scope: SpanScope,
    private readonly ids: SpanIds,
    batches: SpanBatches,
    private readonly options: BatchTracerProviderOptions,
  ) {
    this.onEnd = (span) => batches.add(span);
  }

  startSpan(name: string, spanOptions: SpanOptions = {}, parentContext: Context = context.active()): Span {
    const ctx = spanOptions.root ? trace.deleteSpan(parentContext) : parentContext;
    const found = trace.getSpanContext(ctx);
    const parent = found && found.traceId !== INVALID_TRACEID ? found : undefined;
    const traceId = parent?.traceId ?? this.ids.traceId();
    const spanId = this.ids.spanId();
    const kind = spanOptions.kind ?? SpanKind.INTERNAL;
    const sampling = this.sample(ctx, parent, traceId, name, kind, spanOptions);
    const spanContext: SpanContext = {
      traceId,
      spanId,
      traceFlags:
        sampling.decision === SamplingDecision.RECORD_AND_SAMPLED ? TraceFlags.SAMPLED : TraceFlags.NONE,
    };
    const traceState = sampling.traceState ?? parent?.traceState;
    if (traceState) spanContext.traceState = traceState;
    if (sampling.decision === SamplingDecision.NOT_RECORD) return trace.wrapSpanContext(spanContext);
    const span = new RecordedSpan({
      name,
      kind,
      context: spanContext,
      parent,
      attributes: spanOptions.attributes,
      links: spanOptions.links,
      startTime: spanOptions.startTime,
      resource: this.options.resource,
      scope: this.scope,
      onEnd: this.onEnd,
    });
    if (sampling.attributes) span.setAttributes(sampling.attributes);
    return span;
  }

  startActiveSpan<F extends (span: Span) => unknown>(name: string, fn: F): ReturnType<F>;
  startActiveSpan<F extends (span: Span) => unknown>(
    name: string,
    options: SpanOptions,
    fn: F,
  ): ReturnType<F>;
  startActiveSpan<F extends (span: Span) => unknown>(
    name: string,
    options: SpanOptions,
    ctx: Context,
    fn: F,
  ): ReturnType<F>;
  startActiveSpan<F extends (span: Span) => unknown>(
    name: string,
    ...rest: [F] | [SpanOptions, F] | [SpanOptions, Context, F]
  ): ReturnType<F> {
    const fn = rest[rest.length - 1] as F;
    const spanOptions = rest.length > 1 ? (rest[0] as SpanOptions) : undefined;
    const parentContext = rest.length > 2 ? (rest[1] as Context) : context.active();
    const span = this.startSpan(name, spanOptions, parentContext);
    return context.with(trace.setSpan(linkedContext(parentContext), span), () => fn(span) as ReturnType<F>);
  }

  private sample(
    ctx: Context,
    parent: SpanContext | undefined,
    traceId: string,
    name: string,
    kind: SpanKind,
    spanOptions: SpanOptions,
  ): SamplingResult {
    const { sampler } = this.options;
    if (sampler) {
      return sampler.shouldSample(
        ctx,
        traceId,
        name,
        kind,
        spanOptions.attributes ?? {},
        spanOptions.links ?? [],
      );
    }
    const sampled = parent === undefined || (parent.traceFlags & TraceFlags.SAMPLED) !== 0;
    return sampled ? SAMPLED : NOT_SAMPLED;
  }
}

/** The ended spans waiting for export, and the exports under way. */
class SpanBatches {
  dropped = 0;
  private queue: ExportedSpan[] = [];
  private readonly exporting = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private immediate: NodeJS.Immediate | undefined;
  private closed = false;
  private readonly batchSize: number;
  private readonly queueSize: number;
  private readonly delay: number;
  private readonly timeout: number;

  constructor(private readonly options: BatchTracerProviderOptions) {
    this.batchSize = Math.max(1, options.maxExportBatchSize ?? 512);
    this.queueSize = Math.max(this.batchSize, options.maxQueueSize ?? 2048);
    this.delay = options.scheduledDelayMillis ?? 5000;
    this.timeout = options.exportTimeoutMillis ?? 30_000;
  }

  /** Takes an ended span: a sampled one waits for its batch, an unsampled one is let go. */
  add(span: ExportedSpan): void {
    if ((span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return;
    if (this.closed || this.queue.length >= this.queueSize) {
      this.dropped++;
      return;
    }
    this.queue.push(span);
    if (this.queue.length >= this.batchSize) {
      // Exported off the caller's stack: ending a span stays cheap.
      this.immediate ??= setImmediate(() => {
        this.immediate = undefined;
        this.exportFull();
      });
    } else {
      this.exportLater();
    }
  }

  async flush(): Promise<void> {
    await this.exportAll();
    await this.options.exporter.forceFlush?.();
  }

  async shutdown(): Promise<void> {
    if (this.closed) return;
    await this.exportAll();
    this.closed = true;
    await this.options.exporter.shutdown();
  }

  /** Exports the full batches, leaving a partial one for the timer. */
  private exportFull(): void {
    while (this.queue.length >= this.batchSize) this.exportBatch(this.queue.splice(0, this.batchSize));
    if (this.queue.length > 0) this.exportLater();
  }

  /** Exports what is held once the delay has passed, unless a timer for it is already set. */
  private exportLater(): void {
    if (this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.exportAll();
    }, this.delay);
    this.timer.unref();
  }

  /** Exports everything held, and waits for every export under way. */
  private async exportAll(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    while (this.queue.length > 0) this.exportBatch(this.queue.splice(0, this.batchSize));
    await Promise.all(this.exporting);
  }

  private exportBatch(batch: ExportedSpan[]): void {
    const exported = this.send(batch).finally(() => this.exporting.delete(exported));
    this.exporting.add(exported);
  }

  private async send(batch: ExportedSpan[]): Promise<void> {
    const { resource, exporter } = this.options;
    try {
      if (resource.asyncAttributesPending) await resource.waitForAsyncAttributes?.();
      const result = await new Promise<{ code: number; error?: Error }>((resolve) => {
        const timer = setTimeout(
          () => resolve({ code: 1, error: new Error(`the export took over ${this.timeout} ms`) }),
          this.timeout,
        );
        timer.unref();
        exporter.export(batch, (outcome) => {
          clearTimeout(timer);
          resolve(outcome);
        });
      });
      if (result.code !== EXPORT_SUCCESS) {
        diag.error(`${batch.length} spans were not exported`, result.error ?? 'the exporter failed');
      }
    } catch (error) {
      diag.error(`${batch.length} spans were not exported`, error);
    }
  }
}
