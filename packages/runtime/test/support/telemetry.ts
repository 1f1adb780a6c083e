import { context, metrics, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
  type ResourceMetrics,
} from '@opentelemetry/sdk-metrics';
import { type ReadableSpan, type SpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';

/** An OpenTelemetry SDK registered for this test file, keeping spans and metrics in memory. */
export interface MemoryTelemetry {
  /** Ended spans, oldest first. */
  spans(): ReadableSpan[];
  /** Collects the metrics now and returns the data points of `name` (across scopes). */
  collect(name: string): Promise<{ attributes: Record<string, unknown>; value: unknown }[]>;
  /** Forgets the spans seen so far. */
  reset(): void;
}

/**
 * Registers the OpenTelemetry SDK globally (as an application would) with in-memory exporters and
 * the AsyncLocalStorage context manager. Once per test file (vitest isolates files).
 */
export function registerMemoryTelemetry(): MemoryTelemetry {
  // Kept as they end (an exporter behind SimpleSpanProcessor would get them a tick later).
  let ended: ReadableSpan[] = [];
  const keep: SpanProcessor = {
    onStart: () => {},
    onEnd: (span) => {
      ended.push(span);
    },
    forceFlush: async () => {},
    shutdown: async () => {},
  };
  const tracerProvider = new TracerProvider({ spanProcessors: [keep] });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(tracerProvider);
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
  return {
    spans: () => [...ended],
    async collect(name) {
      await reader.forceFlush();
      const batches: ResourceMetrics[] = exporter.getMetrics();
      const last = batches.at(-1);
      exporter.reset();
      const points: { attributes: Record<string, unknown>; value: unknown }[] = [];
      for (const scope of last?.scopeMetrics ?? []) {
        for (const metric of scope.metrics) {
          if (metric.descriptor.name !== name) continue;
          for (const point of metric.dataPoints)
            points.push({ attributes: point.attributes, value: point.value });
        }
      }
      return points;
    },
    reset: () => {
      ended = [];
    },
  };
}

/** The spans named `name` (exactly, or starting with it when it ends with a space). */
export function spansNamed(all: readonly ReadableSpan[], name: string): ReadableSpan[] {
  return all.filter((span) => (name.endsWith(' ') ? span.name.startsWith(name) : span.name === name));
}

/** The one span named `name`; fails when there are none or several. */
export function oneSpan(all: readonly ReadableSpan[], name: string): ReadableSpan {
  const found = spansNamed(all, name);
  if (found.length !== 1) {
    throw new Error(
      `expected one span "${name}", found ${found.length}: ${all.map((s) => s.name).join(', ')}`,
    );
  }
  return found[0]!;
}

/** True when `child`'s parent is `parent`. */
export function isChildOf(child: ReadableSpan, parent: ReadableSpan): boolean {
  return (
    child.parentSpanContext?.spanId === parent.spanContext().spanId &&
    child.spanContext().traceId === parent.spanContext().traceId
  );
}
