import type { InboundMessage } from '@colloquy/core';
import type { DeliveryOutcome } from '@colloquy/core/gateway';
import { context, type Link, SpanKind, trace } from '@opentelemetry/api';
import { linkedContext } from './linked-context.js';
import { failSpan } from './span-errors.js';
import type { Telemetry } from './telemetry.js';
import { contextOfRun, formatTraceparent, parseTraceparent, withTreeId } from './trace-context.js';

/**
 * Handles an inbound message in its `colloquy.inbound <channel>` span, active while it runs so the
 * run it queues stores it as its parent (the turn's `invoke_agent` span is then its child).
 *
 * @param telemetry - the runtime's telemetry
 * @param inbound - the message
 * @param receive - handles it
 * @returns what `receive` returns
 */
export function traceInbound<T>(
  telemetry: Telemetry,
  inbound: InboundMessage,
  receive: () => Promise<T>,
): Promise<T> {
  const span = telemetry.tracer.startSpan(`colloquy.inbound ${inbound.channel}`, {
    kind: SpanKind.CONSUMER,
    attributes: {
      'colloquy.channel': inbound.channel,
      'colloquy.chat.type': inbound.chat.type,
      'messaging.message.id': inbound.messageId,
    },
  });
  let received: Promise<T>;
  try {
    received = telemetry.within(trace.setSpan(linkedContext(context.active()), span), receive);
  } catch (error) {
    received = Promise.reject(error);
  }
  // Ended without an async function's frame and promises of its own: every message comes this way.
  return received.then(
    (value) => {
      span.end();
      return value;
    },
    (error: unknown) => {
      failSpan(span, error);
      span.end();
      throw error;
    },
  );
}

/**
 * Sends one outbound message in its `colloquy.deliver <channel>` span; a failed send marks the span
 * and counts in `colloquy.delivery.failures`.
 *
 * @param telemetry - the runtime's telemetry
 * @param channel - the target channel
 * @param kind - what the message is (reply, announce, ...)
 * @param send - sends it
 * @returns the outcome
 */
export async function traceDelivery(
  telemetry: Telemetry,
  channel: string,
  kind: string,
  send: () => Promise<DeliveryOutcome>,
): Promise<DeliveryOutcome> {
  const span = telemetry.tracer.startSpan(`colloquy.deliver ${channel}`, {
    kind: SpanKind.PRODUCER,
    attributes: { 'colloquy.channel': channel, 'colloquy.delivery.kind': kind },
  });
  const outcome = await send();
  if (span.isRecording()) span.setAttribute('colloquy.delivery.status', outcome.status);
  if (outcome.status === 'failed') {
    failSpan(span, outcome.code ?? 'CHANNEL_ERROR', outcome.error);
    telemetry.metrics.deliveryFailures.add(1, {
      'colloquy.channel': channel,
      'colloquy.delivery.kind': kind,
    });
  }
  span.end();
  return outcome;
}

/** Where an announce stands in its spawn tree: kept on the outbox payload as `trace`. */
export interface AnnounceTrace {
  /** The child run's stored trace context: the span that spawned it. */
  spawn?: string;
  /** The child's own `invoke_agent` span that ended the run. */
  child?: string;
  /** The spawn tree id. */
  tree?: string;
}

/**
 * The trace of a sub-agent run's announce, read while the run's turn ends (its span active).
 *
 * @param meta - the child run's meta
 * @returns the trace, or undefined when the run has none
 */
export function announceTraceOf(meta: Record<string, unknown> | undefined): AnnounceTrace | undefined {
  const active = trace.getSpanContext(context.active());
  const spawn = typeof meta?.traceparent === 'string' ? meta.traceparent : undefined;
  const tree = typeof meta?.traceTree === 'string' ? meta.traceTree : undefined;
  if (!active && !spawn) return undefined;
  return {
    ...(spawn ? { spawn } : {}),
    ...(active ? { child: formatTraceparent(active) } : {}),
    ...(tree ? { tree } : {}),
  };
}

/**
 * Starts the `colloquy.announce` span of an announce put into its requester's inbox: in the
 * spawn's trace (a child of the `sessions_spawn` call), linked to the child's `invoke_agent` span;
 * in a trace of its own with the tree id when `traceTree` is `run`.
 *
 * @param telemetry - the runtime's telemetry
 * @param announce - the child, its run, the requester and the announce's trace
 * @returns ends the span (marked failed with `error`, if given)
 */
export function startAnnounceSpan(
  telemetry: Telemetry,
  announce: {
    childSessionKey: string;
    runId: string;
    requester: string;
    status: string;
    trace?: AnnounceTrace;
  },
): (error?: unknown) => void {
  const child = parseTraceparent(announce.trace?.child);
  const links: Link[] = child ? [{ context: child, attributes: { 'colloquy.link': 'child-run' } }] : [];
  const perRun = telemetry.traceTree === 'run';
  const parent =
    perRun || !announce.trace?.spawn ? context.active() : contextOfRun({ traceparent: announce.trace.spawn });
  const tree = announce.trace?.tree ?? child?.traceId;
  const span = telemetry.tracer.startSpan(
    'colloquy.announce',
    {
      kind: SpanKind.PRODUCER,
      attributes: {
        'colloquy.child.session': announce.childSessionKey,
        'colloquy.run.id': announce.runId,
        'gen_ai.conversation.id': announce.requester,
        'colloquy.announce.status': announce.status,
        ...(tree ? { 'colloquy.tree.id': tree } : {}),
      },
      links,
      ...(perRun ? { root: true } : {}),
    },
    tree ? withTreeId(parent, tree) : parent,
  );
  return (error) => {
    if (error !== undefined) failSpan(span, error);
    span.end();
  };
}
