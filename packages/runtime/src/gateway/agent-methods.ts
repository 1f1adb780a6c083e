import { ColloquyError, normalizeSessionKey, type SessionRecord } from '@colloquy/core';
import type {
  AgentSessionInit,
  AgentWaitResult,
  GatewayResult,
  Lane,
  RunRecord,
} from '@colloquy/core/gateway';
import {
  classifySessionKey,
  isMcpClientSessionKey,
  isReservedSessionKey,
  resolveSessionKeyAlias,
} from '@colloquy/core/internal';
import { type AnnounceOutcome, type MessageProvenance, TERMINAL_RUN_STATUSES } from '@colloquy/core/store';
import { LRUCache } from 'lru-cache';
import { enqueueRun, newSessionRecord } from '../agent/enqueue-run.js';
import { lookupModel } from '../agent/model-selection.js';
import type { RuntimeContext } from '../runtime/runtime-context.js';
import { forkSeed } from '../subagents/fork-seed.js';
import { needsPreparation, type PreparedSpawn, prepareSpawn } from '../subagents/spawn-extras.js';
import { abortRuns, abortSessionRuns } from './abort-runs.js';
import { readParams } from './params.js';
import { keyContextFor, requireSession } from './resolve-session.js';

const LANES: readonly Lane[] = ['main', 'subagent', 'cron'];
/** The longest `agent.wait` accepted (one day). */
export const MAX_WAIT_MS = 24 * 60 * 60 * 1000;
/** Idempotency keys remembered in memory (older ones are found through the store). */
const IDEMPOTENCY_MEMORY = 10_000;

/** State of the `agent` method kept between calls. */
export interface AgentMethodsState {
  /** Run ids by session key and idempotency key, the newest `IDEMPOTENCY_MEMORY`. */
  idempotency: LRUCache<string, string>;
}

/** Creates the state of the `agent` method. */
export function createAgentMethodsState(): AgentMethodsState {
  return { idempotency: new LRUCache({ max: IDEMPOTENCY_MEMORY }) };
}

/**
 * `agent`: enqueue a run and return its id at once. Creates the session when `session` (init
 * fields) is given or the key is an agent's main key; otherwise the session must exist.
 * A repeated `idempotencyKey` returns the first run. A new session asking for a thread or
 * attachments is prepared first (see `prepareSpawn`). With `steer: true` the message goes to the
 * session's active run instead (see `steerSession`).
 *
 * @throws `SESSION_NOT_FOUND`, `INVALID_ARGUMENT`, `ABORTED` (shutting down), `CONFLICT` (nothing to
 *   steer), `FORBIDDEN` / `NOT_SUPPORTED` / `CHANNEL_ERROR` (attachments, threads)
 */
export async function agentRun(
  ctx: RuntimeContext,
  state: AgentMethodsState,
  params: unknown,
): Promise<GatewayResult<'agent'>> {
  const p = readParams('agent', params);
  p.only([
    'sessionKey',
    'message',
    'lane',
    'deliver',
    'spawnedBy',
    'extraSystemPrompt',
    'timeoutSeconds',
    'provenance',
    'idempotencyKey',
    'session',
    'steer',
    'watchBy',
    'traceparent',
    'tracestate',
  ]);
  const rawKey = p.string('sessionKey');
  const message = readMessage(params);
  const lane = (p.optionalString('lane') ?? 'main') as Lane;
  if (!LANES.includes(lane)) {
    throw new ColloquyError('INVALID_ARGUMENT', `agent: "lane" must be one of ${LANES.join(', ')}.`, {
      lane,
    });
  }
  const deliverParam = p.optionalBoolean('deliver');
  const spawnedByRaw = p.optionalString('spawnedBy');
  const extraSystemPrompt = p.optionalString('extraSystemPrompt');
  const timeoutSeconds = p.optionalNumber('timeoutSeconds', 0);
  const provenance = p.optionalObject('provenance') as MessageProvenance | undefined;
  const idempotencyKey = p.optionalString('idempotencyKey');
  const init = p.optionalObject('session') as AgentSessionInit | undefined;
  const steer = p.optionalBoolean('steer') ?? false;
  const watchByRaw = p.optionalString('watchBy');
  if (steer && watchByRaw !== undefined) {
    throw new ColloquyError('INVALID_ARGUMENT', 'agent: "watchBy" cannot be combined with "steer".', {
      field: 'watchBy',
    });
  }
  const watchBy = watchByRaw === undefined ? undefined : normalizeSessionKey(watchByRaw);
  const trace = readTraceContext(p.optionalString('traceparent'), p.optionalString('tracestate'));

  const key = resolveSessionKeyAlias(rawKey, keyContextFor(ctx.config));
  if (isReservedSessionKey(key)) {
    throw new ColloquyError('INVALID_ARGUMENT', `agent: "${rawKey}" is a reserved key, not a session.`, {
      key,
    });
  }
  if (isMcpClientSessionKey(key)) {
    throw new ColloquyError(
      'FORBIDDEN',
      `agent: "${rawKey}" is an MCP client's session; no model runs in it (its client reads what arrives with events_wait).`,
      { key },
    );
  }
  if (steer) {
    const target = await requireSession(ctx.store, ctx.config, rawKey);
    return ctx.subagents.steer(target.key, message, provenance);
  }
  if (idempotencyKey) {
    const earlier = await findIdempotent(ctx, state, key, idempotencyKey);
    if (earlier) return { runId: earlier.runId, sessionKey: earlier.sessionKey, status: earlier.status };
  }

  const spawnedBy = spawnedByRaw ? normalizeSessionKey(spawnedByRaw) : undefined;
  let session: SessionRecord | undefined = await ctx.store.getSession(key);
  let created: SessionRecord | undefined;
  if (!session) {
    const isMain = classifySessionKey(key, { mainKey: ctx.config.session.mainKey }) === 'main';
    if (!init && !isMain) {
      // Not a key: maybe a sessionId or a spelling requireSession understands; else SESSION_NOT_FOUND.
      session = await requireSession(ctx.store, ctx.config, rawKey);
    } else {
      if (init?.model && lookupModel(ctx.models, init.model) === undefined) {
        throw new ColloquyError(
          'INVALID_ARGUMENT',
          `agent: the model "${init.model}" is not available. Configure its provider under models.providers, or omit model.`,
          { model: init.model },
        );
      }
      created = await newSessionRecord(ctx, key, init ?? {}, spawnedBy);
      session = created;
    }
  }

  const seed =
    created && init?.inheritedHistory !== undefined ? forkSeed(ctx, init.inheritedHistory, spawnedBy) : [];
  // A session that holds its parent's history is guarded as that history (spec section 11).
  if (created && seed.length > 0) {
    created = { ...created, forked: true };
    session = created;
  }
  let prepared: PreparedSpawn | undefined;
  if (created && init && needsPreparation(init)) {
    prepared = await prepareSpawn(ctx, ctx.subagents.workspaceRoot, created, init, message);
    created = prepared.record;
    session = created;
  }
  // A thread-bound child answers in its own thread, first run included (spec section 5).
  const deliver =
    prepared?.result.thread !== undefined ||
    (deliverParam ?? (session.deliveryContext !== undefined && lane !== 'subagent'));
  const extraPrompt = [extraSystemPrompt, prepared?.promptNote].filter(Boolean).join('\n\n') || undefined;
  const newRecord = created;
  let run: RunRecord;
  try {
    run = await enqueueRun(
      ctx,
      {
        sessionKey: session.key,
        message,
        lane,
        deliver,
        ...(spawnedBy ? { spawnedBy } : {}),
        ...(extraPrompt ? { extraSystemPrompt: extraPrompt } : {}),
        ...(timeoutSeconds ? { timeoutMs: Math.round(timeoutSeconds * 1000) } : {}),
        ...(provenance ? { provenance } : {}),
        ...(idempotencyKey || trace
          ? { meta: { ...(idempotencyKey ? { idempotencyKey } : {}), ...trace } }
          : {}),
        ...(seed.length > 0 ? { seed } : {}),
        ...(watchBy ? { watchBy } : {}),
      },
      newRecord && (() => newRecord),
    );
  } catch (error) {
    await prepared?.rollback();
    throw error;
  }
  await prepared?.commit();
  if (idempotencyKey) remember(state, session.key, idempotencyKey, run.runId);
  const watch = run.meta?.watch as { sinceVersion: number } | undefined;
  return {
    runId: run.runId,
    sessionKey: run.sessionKey,
    status: run.status,
    ...prepared?.result,
    ...(watch ? { watching: { sinceVersion: watch.sinceVersion } } : {}),
  };
}

function readMessage(params: unknown): string {
  const message = (params as { message?: unknown }).message;
  if (typeof message !== 'string' || message.trim() === '') {
    throw new ColloquyError('INVALID_ARGUMENT', 'agent: "message" must be a non-empty string.', {
      field: 'message',
    });
  }
  return message;
}

async function findIdempotent(
  ctx: RuntimeContext,
  state: AgentMethodsState,
  key: string,
  idempotencyKey: string,
): Promise<RunRecord | undefined> {
  const runId = state.idempotency.get(`${key}\u0000${idempotencyKey}`);
  if (runId) return ctx.store.getRun(runId);
  const recent = await ctx.store.listRuns({ sessionKey: key, limit: 200 });
  return recent.find((run) => run.meta?.idempotencyKey === idempotencyKey);
}

function remember(state: AgentMethodsState, key: string, idempotencyKey: string, runId: string): void {
  state.idempotency.set(`${key}\u0000${idempotencyKey}`, runId);
}

/**
 * `agent.wait`: waits up to `timeoutMs` for a run to end. Reads the store first, so a run that
 * ended before the wait began (or in another connection, or before a reconnect) answers at once.
 *
 * @throws `RUN_NOT_FOUND`, `INVALID_ARGUMENT`
 */
export async function agentWait(ctx: RuntimeContext, params: unknown): Promise<GatewayResult<'agent.wait'>> {
  const p = readParams('agent.wait', params);
  p.only(['runId', 'timeoutMs']);
  const runId = p.string('runId');
  const timeoutMs = Math.min(p.optionalNumber('timeoutMs', 0) ?? 0, MAX_WAIT_MS);
  const deadline = Date.now() + timeoutMs;
  let run = await requireRun(ctx, runId);
  // With a cluster the end may be told by another instance; the store is read again every
  // second in case that notice was lost with a connection.
  const slice = ctx.cluster ? CLUSTER_RECHECK_MS : MAX_WAIT_MS;
  for (let left = timeoutMs; !TERMINAL_RUN_STATUSES.includes(run.status) && left > 0; ) {
    await ctx.waiters.wait(runId, Math.min(left, slice));
    run = await requireRun(ctx, runId);
    left = deadline - Date.now();
  }
  return waitResult(run);
}

/** How often `agent.wait` reads the store again while a cluster runs the run. */
const CLUSTER_RECHECK_MS = 1000;

async function requireRun(ctx: RuntimeContext, runId: string): Promise<RunRecord> {
  const run = await ctx.store.getRun(runId);
  if (!run) {
    throw new ColloquyError(
      'RUN_NOT_FOUND',
      `No run "${runId}". Use the runId returned by agent; runs of deleted sessions are kept.`,
      { runId },
    );
  }
  return run;
}

function waitResult(run: RunRecord): AgentWaitResult {
  return {
    runId: run.runId,
    status: run.status,
    waitTimedOut: !TERMINAL_RUN_STATUSES.includes(run.status),
    ...(run.reply !== undefined ? { reply: run.reply } : {}),
    ...(run.error !== undefined ? { error: run.error } : {}),
    ...(run.usage ? { usage: run.usage } : {}),
  };
}

/**
 * `agent.abort`: stops one run (`runId`) or every active run of a session (`sessionKey`), whose
 * yield ends too (see `abortSessionRuns`). Stopped runs end `killed` with `reason` as their error.
 *
 * @throws `RUN_NOT_FOUND`, `SESSION_NOT_FOUND`, `INVALID_ARGUMENT`
 */
export async function agentAbort(
  ctx: RuntimeContext,
  params: unknown,
): Promise<GatewayResult<'agent.abort'>> {
  const p = readParams('agent.abort', params);
  p.only(['runId', 'sessionKey', 'reason']);
  const runId = p.optionalString('runId');
  const sessionKey = p.optionalString('sessionKey');
  const reason = p.optionalString('reason') ?? 'The run was aborted.';
  if ((runId === undefined) === (sessionKey === undefined)) {
    throw new ColloquyError('INVALID_ARGUMENT', 'agent.abort: pass exactly one of "runId" or "sessionKey".');
  }
  if (runId !== undefined) {
    await requireRun(ctx, runId);
    return { aborted: await abortRuns(ctx, [runId], reason) };
  }
  const session = await requireSession(ctx.store, ctx.config, sessionKey!);
  return { aborted: await abortSessionRuns(ctx, session.key, reason) };
}

const ANNOUNCE_OUTCOMES = ['delivered', 'skipped', 'denied', 'failed'] as const;

/**
 * `agent.recordAnnounce`: records on a run how its announce step ended, so an announce is never
 * silently dropped. `outcome.at` defaults to now.
 *
 * @throws `RUN_NOT_FOUND`, `INVALID_ARGUMENT`
 */
export async function agentRecordAnnounce(
  ctx: RuntimeContext,
  params: unknown,
): Promise<GatewayResult<'agent.recordAnnounce'>> {
  const p = readParams('agent.recordAnnounce', params);
  p.only(['runId', 'outcome']);
  const runId = p.string('runId');
  const raw = p.optionalObject('outcome');
  const outcome = raw?.outcome;
  if (
    !raw ||
    typeof outcome !== 'string' ||
    !ANNOUNCE_OUTCOMES.includes(outcome as AnnounceOutcome['outcome'])
  ) {
    throw new ColloquyError(
      'INVALID_ARGUMENT',
      `agent.recordAnnounce: "outcome.outcome" must be one of ${ANNOUNCE_OUTCOMES.join(', ')}.`,
      { field: 'outcome' },
    );
  }
  if (raw.reason !== undefined && typeof raw.reason !== 'string') {
    throw new ColloquyError('INVALID_ARGUMENT', 'agent.recordAnnounce: "outcome.reason" must be a string.', {
      field: 'outcome.reason',
    });
  }
  await requireRun(ctx, runId);
  const at = typeof raw.at === 'number' && Number.isFinite(raw.at) ? raw.at : ctx.clock.now();
  const announce: AnnounceOutcome = {
    outcome: outcome as AnnounceOutcome['outcome'],
    at,
    ...(typeof raw.reason === 'string' ? { reason: raw.reason } : {}),
  };
  await ctx.store.updateRun(runId, { announce, updatedAt: ctx.clock.now() });
  return { runId };
}

const TRACEPARENT = /^[0-9a-f]{2}-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/;

/** A W3C trace context to keep on the run, or nothing; a malformed `traceparent` is refused. */
function readTraceContext(
  traceparent: string | undefined,
  tracestate: string | undefined,
): { traceparent: string; tracestate?: string } | undefined {
  if (traceparent === undefined) return undefined;
  const value = traceparent.trim().toLowerCase();
  if (!TRACEPARENT.test(value) || value.startsWith('ff')) {
    throw new ColloquyError(
      'INVALID_ARGUMENT',
      'agent: "traceparent" must be a W3C trace context (version-traceid-parentid-flags, e.g. 00-<32 hex>-<16 hex>-01).',
      { field: 'traceparent' },
    );
  }
  return tracestate === undefined ? { traceparent: value } : { traceparent: value, tracestate };
}
