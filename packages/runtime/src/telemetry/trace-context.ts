import {
  type Context,
  context,
  createContextKey,
  createTraceState,
  INVALID_SPANID,
  INVALID_TRACEID,
  ROOT_CONTEXT,
  type SpanContext,
  trace,
} from '@opentelemetry/api';
import { linkedContext } from './linked-context.js';

/**
 * The trace fields a run record keeps in its `meta`: the W3C trace context of the span that
 * queued it (an inbound message, the `sessions_spawn` call of the parent, a gateway or MCP client's
 * `traceparent`) and the id of the spawn tree it belongs to. The run record is what a cluster job
 * and a restart read back, so a run continues its tree's trace wherever and whenever it runs.
 */
export interface RunTraceMeta {
  /** `00-<trace id>-<span id>-<flags>`. */
  traceparent: string;
  tracestate?: string;
  /**
   * The spawn tree's id (`colloquy.tree.id`): the trace id of the tree's first span. Left out when it
   * is the trace id of `traceparent` (a tree traced as one trace), which then stands for it.
   */
  traceTree?: string;
}

const TREE_ID = createContextKey('colloquy.tree.id');

/** The root context, cheap to derive from (see {@link linkedContext}). */
const LINKED_ROOT = linkedContext(ROOT_CONTEXT);

/**
 * The `traceparent` header value of a span context.
 *
 * @param span - the span context
 * @returns the W3C `traceparent`
 */
export function formatTraceparent(span: SpanContext): string {
  return `00-${span.traceId}-${span.spanId}-${span.traceFlags.toString(16).padStart(2, '0')}`;
}

/**
 * The remote span context of a W3C `traceparent` (and `tracestate`), or undefined when it is not one:
 * version `00`-`fe`, a 32-digit trace id and a 16-digit span id, neither all zeros, and flags (lower-case
 * hex, as the specification writes them; upper case and surrounding spaces are accepted on input).
 *
 * @param traceparent - the header value
 * @param tracestate - its `tracestate`, if any
 * @returns the span context
 */
export function parseTraceparent(traceparent: unknown, tracestate?: unknown): SpanContext | undefined {
  if (typeof traceparent !== 'string') return undefined;
  // Run records hold what formatTraceparent wrote: checked as it is, without copies.
  const value = isTraceparentShape(traceparent) ? traceparent : traceparent.trim().toLowerCase();
  if (!isTraceparentShape(value) || value.startsWith('ff')) return undefined;
  const traceId = value.slice(3, 35);
  const spanId = value.slice(36, 52);
  if (traceId === INVALID_TRACEID || spanId === INVALID_SPANID) return undefined;
  const span: SpanContext = {
    traceId,
    spanId,
    traceFlags: Number.parseInt(value.slice(53, 55), 16) & 1,
    isRemote: true,
  };
  if (typeof tracestate === 'string' && tracestate !== '') span.traceState = createTraceState(tracestate);
  return span;
}

/** `vv-<32 hex>-<16 hex>-ff` in lower-case hex digits, the dashes where they belong. */
function isTraceparentShape(value: string): boolean {
  if (value.length !== 55) return false;
  for (let i = 0; i < 55; i++) {
    const code = value.charCodeAt(i);
    const dash = i === 2 || i === 35 || i === 52;
    if (dash ? code !== DASH : !isLowerHexDigit(code)) return false;
  }
  return true;
}

const DASH = 0x2d;

function isLowerHexDigit(code: number): boolean {
  return (code >= 0x30 && code <= 0x39) || (code >= 0x61 && code <= 0x66);
}

/**
 * The trace fields to keep on a run queued in `ctx` (by default the active context): nothing when
 * no span is active, which is always the case when no OpenTelemetry SDK is registered.
 *
 * @param ctx - the context the run is queued in
 * @returns the fields, or undefined
 */
export function traceMetaOf(ctx: Context = context.active()): RunTraceMeta | undefined {
  const span = trace.getSpanContext(ctx);
  // A tracer gives valid ids or the API's invalid ones (a span of the no-op tracer).
  if (!span || span.traceId === INVALID_TRACEID || span.spanId === INVALID_SPANID) return undefined;
  const tree = treeIdOf(ctx);
  const state = span.traceState?.serialize();
  const traceparent = formatTraceparent(span);
  return {
    traceparent,
    ...(state ? { tracestate: state } : {}),
    ...(tree && tree !== span.traceId ? { traceTree: tree } : {}),
  };
}

/**
 * A run's `meta` with the active trace context added, unless it already has a `traceparent` (a
 * client's own, from the gateway `agent` method or an MCP request's `_meta`).
 *
 * @param meta - the run's meta
 * @returns `meta`, or a copy with the trace fields
 */
export function withTraceMeta(
  meta: Record<string, unknown> | undefined,
): Record<string, unknown> | undefined {
  if (meta?.traceparent !== undefined) return meta;
  const trace = traceMetaOf();
  return trace ? { ...meta, ...trace } : meta;
}

/**
 * The context a run's spans start from: its stored trace context (remote parent) and tree id.
 *
 * @param meta - the run's meta
 * @param parent - its span context, when the caller has already parsed it
 * @returns the context, the root context when the run has none
 */
export function contextOfRun(
  meta: Record<string, unknown> | undefined,
  parent: SpanContext | undefined = parseTraceparent(meta?.traceparent, meta?.tracestate),
): Context {
  if (!parent) return ROOT_CONTEXT;
  const withParent = trace.setSpanContext(LINKED_ROOT, parent);
  return typeof meta?.traceTree === 'string' ? withTreeId(withParent, meta.traceTree) : withParent;
}

/**
 * `ctx` carrying the spawn tree id that runs queued in it inherit.
 *
 * @param ctx - the context
 * @param treeId - the tree id
 * @returns the new context
 */
export function withTreeId(ctx: Context, treeId: string): Context {
  return ctx.setValue(TREE_ID, treeId);
}

/**
 * The spawn tree id carried by `ctx`, if any.
 *
 * @param ctx - the context
 * @returns the tree id
 */
export function treeIdOf(ctx: Context): string | undefined {
  const value = ctx.getValue(TREE_ID);
  return typeof value === 'string' ? value : undefined;
}
