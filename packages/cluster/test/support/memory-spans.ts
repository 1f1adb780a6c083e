import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  TracerProvider,
} from '@opentelemetry/sdk-trace';

/**
 * Registers the OpenTelemetry SDK globally, as an application does, exporting ended spans to
 * memory. Every runtime created afterwards in this test file (every instance) traces into it.
 * Once per test file (vitest isolates files).
 *
 * @returns the spans ended so far, oldest first
 */
export function registerMemorySpans(): () => ReadableSpan[] {
  const exporter = new InMemorySpanExporter();
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(
    new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] }),
  );
  return () => exporter.getFinishedSpans();
}
