import { describe, expect, it } from 'vitest';
import { runtimeTelemetryOptions, telemetryWanted } from './start-telemetry.js';

const section = {
  sampleRatio: 1,
  metricIntervalSeconds: 60,
  recordContent: false,
  traceTree: 'tree' as const,
};

describe('telemetryWanted', () => {
  it('is off without an OTLP endpoint in the environment or telemetry.enabled', () => {
    expect(telemetryWanted(section, {})).toBe(false);
    expect(telemetryWanted(section, { OTEL_SERVICE_NAME: 'bot' })).toBe(false);
    expect(telemetryWanted(section, { OTEL_EXPORTER_OTLP_ENDPOINT: '  ' })).toBe(false);
  });

  it('is on when the standard environment names an endpoint', () => {
    expect(telemetryWanted(section, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toBe(true);
    expect(
      telemetryWanted(section, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' }),
    ).toBe(true);
  });

  it('follows telemetry.enabled over the environment, and OTEL_SDK_DISABLED over both', () => {
    expect(telemetryWanted({ ...section, enabled: true }, {})).toBe(true);
    expect(
      telemetryWanted({ ...section, enabled: false }, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:1' }),
    ).toBe(false);
    expect(telemetryWanted({ ...section, enabled: true }, { OTEL_SDK_DISABLED: 'true' })).toBe(false);
  });
});

describe('runtimeTelemetryOptions', () => {
  it('passes content recording and the trace layout to the runtime', () => {
    expect(runtimeTelemetryOptions({ ...section, recordContent: true, traceTree: 'run' })).toEqual({
      recordContent: true,
      traceTree: 'run',
    });
  });
});
