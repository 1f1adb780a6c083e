import { createBatchTracerProvider, type RuntimeTelemetryOptions } from '@colloquy/runtime';
import type { TelemetrySection } from '../config/app-schema.js';
import type { Env } from '../config/env-overlay.js';

/** The OpenTelemetry SDK the app started: flush and stop it after the runtime has stopped. */
export interface StartedTelemetry {
  /** Where traces go, for the start-up log. */
  readonly tracesUrl: string;
  /** Exports what is still buffered, then stops the SDK. */
  shutdown(): Promise<void>;
}

/**
 * Whether the app should export telemetry: `telemetry.enabled` when set, else whether the standard
 * environment names an OTLP endpoint. `OTEL_SDK_DISABLED=true` always wins.
 *
 * @param section - the `telemetry` section
 * @param env - the environment
 * @returns true to start the SDK
 */
export function telemetryWanted(section: TelemetrySection, env: Env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  if (section.enabled !== undefined) return section.enabled;
  return [
    'OTEL_EXPORTER_OTLP_ENDPOINT',
    'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT',
  ].some((name) => (env[name]?.trim() ?? '') !== '');
}

/**
 * The runtime's telemetry options from the `telemetry` section.
 *
 * @param section - the `telemetry` section
 * @returns content recording and trace layout
 */
export function runtimeTelemetryOptions(section: TelemetrySection): RuntimeTelemetryOptions {
  return { recordContent: section.recordContent, traceTree: section.traceTree };
}

/**
 * Starts telemetry with OTLP/HTTP exporters for traces and metrics, when {@link telemetryWanted}: the
 * OpenTelemetry Node SDK for metrics, the context manager and propagation, and the runtime's
 * `createBatchTracerProvider` for spans (the SDK's tracer costs several times its CPU per span; see
 * docs/telemetry.md). It registers the global providers the runtime's `@opentelemetry/api` calls
 * reach, so call it before `createRuntime`. The SDK is loaded only then, so a bot without telemetry
 * pays nothing for it.
 *
 * @param section - the `telemetry` section
 * @param env - the environment (`OTEL_*` variables fill what the section leaves out)
 * @returns the started SDK, or undefined when telemetry is off
 */
export async function startTelemetry(
  section: TelemetrySection,
  env: Env,
): Promise<StartedTelemetry | undefined> {
  if (!telemetryWanted(section, env)) return undefined;
  const [
    api,
    { NodeSDK },
    { OTLPTraceExporter },
    { OTLPMetricExporter },
    { PeriodicExportingMetricReader },
    resources,
    sampling,
  ] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/sdk-node'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/exporter-metrics-otlp-http'),
    import('@opentelemetry/sdk-metrics'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/sdk-trace'),
  ]);
  const base = section.endpoint?.replace(/\/+$/, '');
  const tracesUrl =
    base !== undefined
      ? `${base}/v1/traces`
      : env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() ||
        `${(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || 'http://localhost:4318').replace(/\/+$/, '')}/v1/traces`;
  // What the Node SDK would detect (OTEL_RESOURCE_ATTRIBUTES included), with the service's name last.
  const resource = resources
    .defaultResource()
    .merge(
      resources.detectResources({
        detectors: [
          resources.serviceInstanceIdDetector,
          resources.processDetector,
          resources.hostDetector,
          resources.osDetector,
          resources.envDetector,
        ],
      }),
    )
    .merge(
      resources.resourceFromAttributes({
        'service.name': section.serviceName ?? (env.OTEL_SERVICE_NAME?.trim() || 'colloquy'),
      }),
    );
  const sdk = new NodeSDK({
    resource,
    autoDetectResources: false,
    // No span processor: the SDK then registers no tracer provider, and spans go through ours.
    spanProcessors: [],
    metricReaders: [
      new PeriodicExportingMetricReader({
        exporter: new OTLPMetricExporter(base !== undefined ? { url: `${base}/v1/metrics` } : {}),
        exportIntervalMillis: section.metricIntervalSeconds * 1000,
      }),
    ],
    instrumentations: [],
    logRecordProcessors: [],
  });
  sdk.start();
  const tracerProvider = createBatchTracerProvider({
    exporter: new OTLPTraceExporter(base !== undefined ? { url: `${base}/v1/traces` } : {}),
    resource,
    // A spawn tree is kept or dropped whole: children follow the sampling of the span that queued them.
    sampler: new sampling.ParentBasedSampler({
      root: new sampling.TraceIdRatioBasedSampler(section.sampleRatio),
    }),
  });
  api.trace.setGlobalTracerProvider(tracerProvider);
  return {
    tracesUrl,
    async shutdown() {
      await tracerProvider.shutdown();
      await sdk.shutdown();
      // Unregistered, so a bot started again in this process (a reload, a test) can register its own.
      api.trace.disable();
      api.metrics.disable();
      api.context.disable();
      api.propagation.disable();
    },
  };
}
