import type { ColloquyConfig } from '@colloquy/core';
import { configuredSecrets, createRedactor } from '@colloquy/core/internal';
import {
  type Context,
  context,
  INVALID_SPAN_CONTEXT,
  metrics,
  ProxyTracerProvider,
  type Span,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { RUNTIME_VERSION } from '../runtime/package-version.js';
import { createRuntimeMetrics, type GaugeSources, type RuntimeMetrics } from './runtime-metrics.js';

/** The instrumentation scope: the tracer's and the meter's name. */
export const INSTRUMENTATION_NAME = '@colloquy/runtime';

/**
 * How the runtime traces (`RuntimeOptions.telemetry`). Spans and metrics go to the OpenTelemetry
 * SDK the application registers (`@opentelemetry/api` globals); without one they cost nothing.
 */
export interface RuntimeTelemetryOptions {
  /**
   * Record message content on spans: the prompt and the answer of each model call
   * (`gen_ai.input.messages`, `gen_ai.output.messages`) and tool arguments and results. Secrets
   * are redacted as in `sessions_history` output. Default false: no content, only sizes and names.
   */
  recordContent?: boolean;
  /**
   * `tree` (default): a spawn tree is one trace, its sub-agent runs children of the tool call that
   * spawned them. `run`: each run starts a trace of its own, linked to the span that queued it and
   * carrying the tree's `colloquy.tree.id` (for trees that run for hours, which some backends cut).
   */
  traceTree?: 'tree' | 'run';
}

/** The runtime's tracer, instruments and content rule (internal). */
export interface Telemetry {
  readonly tracer: Tracer;
  /** False when no tracer provider was registered before the runtime was created: spans are skipped. */
  readonly tracing: boolean;
  /** Runs `fn` with `ctx` active (directly, when not tracing). */
  within<T>(ctx: Context, fn: () => T): T;
  readonly metrics: RuntimeMetrics;
  readonly traceTree: 'tree' | 'run';
  /** True when content is recorded. */
  readonly recordContent: boolean;
  /** The text as it may go on a span (secrets redacted); only called when `recordContent`. */
  content(text: string): string;
}

/**
 * Creates the runtime's telemetry from the globals of `@opentelemetry/api` (no-op ones until the
 * application registers an SDK, which it does before creating the runtime).
 *
 * @param config - for the secrets to redact from recorded content
 * @param options - content recording and trace layout
 * @param gauges - what the observable gauges read
 * @returns the telemetry
 */
export function createTelemetry(
  config: ColloquyConfig,
  options: RuntimeTelemetryOptions | undefined,
  gauges: GaugeSources,
): Telemetry {
  const recordContent = options?.recordContent === true;
  const redact = recordContent ? createRedactor(configuredSecrets(config)) : undefined;
  const tracing = tracerProviderRegistered();
  return {
    // Without a registered SDK, a local no-op tracer: no proxy lookup on every span.
    tracer: tracing ? trace.getTracer(INSTRUMENTATION_NAME, RUNTIME_VERSION) : NOOP_TRACER,
    tracing,
    within: tracing ? (ctx, fn) => context.with(ctx, fn) : (_ctx, fn) => fn(),
    metrics: createRuntimeMetrics(metrics.getMeter(INSTRUMENTATION_NAME, RUNTIME_VERSION), gauges),
    traceTree: options?.traceTree ?? 'tree',
    recordContent,
    content: (text) => (redact ? redact(text).text : ''),
  };
}

/** A span that records nothing, shared by every call of {@link NOOP_TRACER}. */
const NOOP_SPAN: Span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/** The tracer of a process without an OpenTelemetry SDK. */
const NOOP_TRACER: Tracer = {
  startSpan: () => NOOP_SPAN,
  startActiveSpan: ((_name: string, ...rest: unknown[]) => {
    const fn = rest.at(-1) as (span: Span) => unknown;
    return fn(NOOP_SPAN);
  }) as Tracer['startActiveSpan'],
};

/** True when an application registered a tracer provider (an SDK) with `@opentelemetry/api`. */
function tracerProviderRegistered(): boolean {
  const provider = trace.getTracerProvider();
  if (!(provider instanceof ProxyTracerProvider)) return true;
  // An unset proxy delegates to the API's own no-op provider, which a fresh proxy also returns.
  return provider.getDelegate() !== new ProxyTracerProvider().getDelegate();
}
