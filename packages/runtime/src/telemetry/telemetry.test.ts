import { resolveConfig } from '@colloquy/core';
import { context, createContextKey, trace } from '@opentelemetry/api';
import { TracerProvider } from '@opentelemetry/sdk-trace';
import { describe, expect, it } from 'vitest';
import { createTelemetry } from './telemetry.js';

const gauges = { runningByLane: () => ({ main: 0, subagent: 0, cron: 0 }), pendingAnnounces: async () => 0 };
const KEY = createContextKey('test');

describe('createTelemetry', () => {
  it('skips spans and context switches when no SDK was registered before the runtime', () => {
    const telemetry = createTelemetry(resolveConfig({}), undefined, gauges);
    expect(telemetry.tracing).toBe(false);
    const span = telemetry.tracer.startSpan('invoke_agent main');
    expect(span.isRecording()).toBe(false);
    expect(
      telemetry.within(context.active().setValue(KEY, 1), () => context.active().getValue(KEY)),
    ).toBeUndefined();
  });

  it('traces through the registered provider once an SDK is registered', () => {
    trace.setGlobalTracerProvider(new TracerProvider());
    try {
      const telemetry = createTelemetry(resolveConfig({}), { recordContent: true }, gauges);
      expect(telemetry.tracing).toBe(true);
      expect(telemetry.tracer.startSpan('invoke_agent main').isRecording()).toBe(true);
      expect(telemetry.content('key sk-ant-abcdefghijklmnopqrstuvwx0123')).not.toContain('sk-ant-');
    } finally {
      trace.disable();
    }
  });
});
