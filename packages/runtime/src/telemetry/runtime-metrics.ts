import type { Lane } from '@colloquy/core/gateway';
import type { Counter, Histogram, Meter } from '@opentelemetry/api';

/** Seconds buckets for model calls and turns (GenAI convention's advice for durations). */
const DURATION_BUCKETS = [
  0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];
/** Token buckets (GenAI convention's advice for `gen_ai.client.token.usage`). */
const TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304];

/** The runtime's instruments (see docs/telemetry.md for their attributes). */
export interface RuntimeMetrics {
  /** `gen_ai.client.operation.duration`: one model step, in seconds. */
  readonly modelDuration: Histogram;
  /** `gen_ai.client.operation.time_to_first_chunk`: until the first streamed chunk, in seconds. */
  readonly timeToFirstChunk: Histogram;
  /** `gen_ai.client.token.usage`: tokens in and out per model step. */
  readonly tokenUsage: Histogram;
  /** `gen_ai.invoke_agent.duration`: one turn, in seconds. */
  readonly turnDuration: Histogram;
  /** `gen_ai.execute_tool.duration`: one tool call, in seconds. */
  readonly toolDuration: Histogram;
  /** `colloquy.run.queue_wait`: from a run's creation to its turn's start, in seconds. */
  readonly queueWait: Histogram;
  /** `colloquy.delivery.failures`: outbound messages a channel did not take. */
  readonly deliveryFailures: Counter;
  /** `colloquy.mcp.calls`: MCP tool calls, by server, tool and outcome. */
  readonly mcpCalls: Counter;
}

/** What the observable gauges read when a metric reader collects. */
export interface GaugeSources {
  /** Turns running per lane. */
  runningByLane(): Readonly<Record<Lane, number>>;
  /** Announces written to the outbox and not yet delivered. */
  pendingAnnounces(): Promise<number>;
}

/**
 * Creates the runtime's instruments on `meter`, and the gauges `colloquy.runs.active` (per
 * `colloquy.lane`) and `colloquy.announces.pending`, read only when a metric reader collects.
 *
 * @param meter - the runtime's meter (a no-op one when no SDK is registered)
 * @param gauges - what the gauges read
 * @returns the instruments
 */
export function createRuntimeMetrics(meter: Meter, gauges: GaugeSources): RuntimeMetrics {
  const seconds = (name: string, description: string) =>
    meter.createHistogram(name, {
      unit: 's',
      description,
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    });
  const active = meter.createObservableGauge('colloquy.runs.active', {
    unit: '{turn}',
    description: 'Turns running in this instance, per lane.',
  });
  active.addCallback((result) => {
    for (const [lane, running] of Object.entries(gauges.runningByLane())) {
      result.observe(running, { 'colloquy.lane': lane });
    }
  });
  const pending = meter.createObservableGauge('colloquy.announces.pending', {
    unit: '{announce}',
    description: 'Sub-agent announces in the outbox, not yet delivered to their requester.',
  });
  pending.addCallback(async (result) => result.observe(await gauges.pendingAnnounces()));
  return {
    modelDuration: seconds(
      'gen_ai.client.operation.duration',
      'Duration of one model call (a step of a turn).',
    ),
    timeToFirstChunk: seconds(
      'gen_ai.client.operation.time_to_first_chunk',
      'Time from the model request to its first streamed chunk.',
    ),
    tokenUsage: meter.createHistogram('gen_ai.client.token.usage', {
      unit: '{token}',
      description: 'Input and output tokens of one model call.',
      advice: { explicitBucketBoundaries: TOKEN_BUCKETS },
    }),
    turnDuration: seconds('gen_ai.invoke_agent.duration', 'Duration of one turn of an agent session.'),
    toolDuration: seconds('gen_ai.execute_tool.duration', 'Duration of one tool call.'),
    queueWait: seconds('colloquy.run.queue_wait', 'Time a run waited between its creation and its turn.'),
    deliveryFailures: meter.createCounter('colloquy.delivery.failures', {
      unit: '{message}',
      description: 'Outbound messages a channel plugin failed to send.',
    }),
    mcpCalls: meter.createCounter('colloquy.mcp.calls', {
      unit: '{call}',
      description: 'Calls of MCP server tools by the agents.',
    }),
  };
}
