import { createTraceState, ROOT_CONTEXT, TraceFlags, trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { formatTraceparent, parseTraceparent, traceMetaOf, withTreeId } from './trace-context.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN_ID = '00f067aa0ba902b7';
const VALID = `00-${TRACE_ID}-${SPAN_ID}-01`;

describe('parseTraceparent', () => {
  it('reads a W3C traceparent as a remote span context, and formatTraceparent writes it back', () => {
    const span = parseTraceparent(VALID);
    expect(span).toEqual({
      traceId: TRACE_ID,
      spanId: SPAN_ID,
      traceFlags: TraceFlags.SAMPLED,
      isRemote: true,
    });
    expect(formatTraceparent(span!)).toBe(VALID);
    expect(parseTraceparent(`00-${TRACE_ID}-${SPAN_ID}-00`)?.traceFlags).toBe(TraceFlags.NONE);
  });

  it('keeps only the sampled flag, and accepts a later version, upper case and surrounding spaces', () => {
    expect(parseTraceparent(`00-${TRACE_ID}-${SPAN_ID}-03`)?.traceFlags).toBe(TraceFlags.SAMPLED);
    expect(parseTraceparent(`cc-${TRACE_ID}-${SPAN_ID}-01`)?.spanId).toBe(SPAN_ID);
    expect(parseTraceparent(`  ${VALID.toUpperCase()}\t`)).toMatchObject({
      traceId: TRACE_ID,
      spanId: SPAN_ID,
    });
  });

  it('carries a tracestate', () => {
    expect(parseTraceparent(VALID, 'vendor=a,other=b')?.traceState?.get('other')).toBe('b');
    expect(parseTraceparent(VALID, '')?.traceState).toBeUndefined();
  });

  it.each([
    ['not a string', 42],
    ['empty', ''],
    ['version ff', `ff-${TRACE_ID}-${SPAN_ID}-01`],
    ['an all-zero trace id', `00-${'0'.repeat(32)}-${SPAN_ID}-01`],
    ['an all-zero span id', `00-${TRACE_ID}-${'0'.repeat(16)}-01`],
    ['a short trace id', `00-${TRACE_ID.slice(1)}-${SPAN_ID}-01`],
    ['a non-hex digit', `00-${TRACE_ID.slice(0, 31)}g-${SPAN_ID}-01`],
    ['a dash out of place', `00-${TRACE_ID}_${SPAN_ID}-01`],
    ['trailing fields', `${VALID}-extra`],
  ])('refuses %s', (_what, value) => {
    expect(parseTraceparent(value)).toBeUndefined();
  });
});

describe('traceMetaOf', () => {
  const local = {
    traceId: '0af7651916cd43dd8448eb211c80319c',
    spanId: 'b7ad6b7169203331',
    traceFlags: TraceFlags.SAMPLED,
    traceState: createTraceState('vendor=a'),
  };
  const active = (treeId: string) => withTreeId(trace.setSpanContext(ROOT_CONTEXT, local), treeId);

  it('leaves the tree id out when it is the trace id, and keeps one that is not', () => {
    const traceparent = `00-${local.traceId}-${local.spanId}-01`;
    expect(traceMetaOf(active(local.traceId))).toEqual({ traceparent, tracestate: 'vendor=a' });
    expect(traceMetaOf(active(TRACE_ID))).toEqual({
      traceparent,
      tracestate: 'vendor=a',
      traceTree: TRACE_ID,
    });
    expect(traceMetaOf(ROOT_CONTEXT)).toBeUndefined();
  });
});
