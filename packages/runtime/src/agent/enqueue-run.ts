import { randomUUID } from 'node:crypto';
import { ColloquyError, type SessionRecord, type TranscriptMessage } from '@colloquy/core';
import type { AgentSessionInit, Lane, RunRecord, SessionOrigin } from '@colloquy/core/gateway';
import {
  agentConfigFor,
  agentIdFromSessionKey,
  classifySessionKey,
  defaultAgentId,
} from '@colloquy/core/internal';
import type { MessageProvenance, StoreTransaction } from '@colloquy/core/store';
import { hasActiveRun } from '../cluster/run-job.js';
import { toQueuedRun } from '../queue/queued-run.js';
import type { RuntimeContext } from '../runtime/runtime-context.js';
import { registerWatch } from '../runtime/watch-notices.js';
import { withTraceMeta } from '../telemetry/trace-context.js';
import { inputMessage } from './run-lifecycle.js';

/** A run to create and queue. */
export interface NewRun {
  /** A run id fixed by the caller (an inbound message's, for deduplication). Default: a new UUID. */
  runId?: string;
  sessionKey: string;
  message: string;
  lane: Lane;
  deliver: boolean;
  spawnedBy?: string;
  extraSystemPrompt?: string;
  timeoutMs?: number;
  provenance?: MessageProvenance;
  meta?: Record<string, unknown>;
  /** Messages appended to the transcript before the run's input, when `sessionUpdate` creates the session (a fork). */
  seed?: TranscriptMessage[];
  /**
   * A session that watches this run's session from before the run's input on (`sessions_send`
   * with `watch: true`): the watch is stored in the enqueue transaction and recorded on the run
   * as `meta.watch` (see `registerWatch`).
   */
  watchBy?: string;
}

/**
 * Creates a run record (`queued`) and touches its session in one transaction (or writes the session
 * record that `sessionUpdate` makes of the stored one, read in the same transaction: a new session,
 * or one updated by an inbound message), then hands the run to the command queue and publishes
 * `run.queued`. With a cluster, the run's job is added in that same transaction instead, and
 * whichever instance has room runs it.
 *
 * When the session is idle (nothing running or queued, no other enqueue in flight, an empty
 * inbox), the run's input message is appended to the transcript in the same transaction (marked
 * `meta.inputCommittedAt`, so the turn does not append it again): the run record, the session row
 * and the first transcript entry commit together. A run that has to wait gets its input appended
 * when its turn begins, after the turns before it.
 *
 * @param ctx - the runtime internals
 * @param input - the run
 * @param sessionUpdate - makes the session record to write from the stored one (undefined when new)
 * @returns the stored run
 * @throws `ABORTED` when the runtime is shutting down
 */
export async function enqueueRun(
  ctx: RuntimeContext,
  input: NewRun,
  sessionUpdate?: (current: SessionRecord | undefined) => SessionRecord,
): Promise<RunRecord> {
  const run = await enqueueRunIf(ctx, input, sessionUpdate);
  // Without a condition the run is always created.
  return run!;
}

/**
 * {@link enqueueRun}, but only when `condition`, read inside the transaction after the session row
 * was written (so concurrent enqueues of one session take turns), holds; otherwise nothing is
 * written.
 *
 * @param ctx - the runtime internals
 * @param input - the run
 * @param sessionUpdate - as for {@link enqueueRun}
 * @param condition - checked in the transaction
 * @returns the stored run, or `undefined` when the condition did not hold
 * @throws `ABORTED` when the runtime is shutting down
 */
export async function enqueueRunIf(
  ctx: RuntimeContext,
  input: NewRun,
  sessionUpdate?: (current: SessionRecord | undefined) => SessionRecord,
  condition?: (tx: StoreTransaction) => Promise<boolean>,
): Promise<RunRecord | undefined> {
  if (!ctx.accepting) {
    throw new ColloquyError(
      'ABORTED',
      'The runtime is shutting down; send the message again once it has restarted.',
    );
  }
  const now = ctx.clock.now();
  const run = newRunRecord(input, now);
  const key = input.sessionKey;
  const { cluster } = ctx;
  const idleHere =
    ctx.queue.runningBatch(key) === undefined && ctx.queue.pendingCount(key) === 0 && !ctx.enqueuing.has(key);
  ctx.enqueuing.add(key);
  try {
    const created = await ctx.store
      .transaction(async (tx) => {
        if (sessionUpdate) {
          const current = await tx.getSession(key);
          await tx.putSession({ ...sessionUpdate(current), updatedAt: now });
          if (!current && input.seed && input.seed.length > 0) await tx.appendMessages(key, input.seed);
        } else await tx.patchSession(key, { updatedAt: now });
        if (condition && !(await condition(tx))) throw NOT_NOW;
        if (input.watchBy) {
          const watch = await registerWatch(ctx, tx, input.watchBy, key, now);
          run.meta = {
            ...run.meta,
            watch: { id: watch.id, watcherKey: watch.watcherKey, sinceVersion: watch.afterVersion },
          };
        }
        const idle = cluster ? !(await hasActiveRun(tx, key)) : idleHere;
        if (idle && run.message !== '' && (await tx.listInbox(key)).length === 0) {
          run.meta = { ...run.meta, inputCommittedAt: now };
          await tx.appendMessages(key, [inputMessage(run)]);
        }
        await tx.createRun(run);
        await cluster?.scheduleRun(run, tx);
        return true;
      })
      .catch((error: unknown) => {
        if (error === NOT_NOW) return false;
        throw error;
      });
    if (!created) return undefined;
    if (!cluster) ctx.queue.enqueue(toQueuedRun(run));
  } finally {
    ctx.enqueuing.delete(key);
  }
  ctx.events.emit({ type: 'run.queued', runId: run.runId, sessionKey: run.sessionKey, lane: run.lane });
  return run;
}

/**
 * The record of a new run, `queued`.
 *
 * @param input - the run
 * @param now - epoch ms, its creation time
 * @returns the record (not stored)
 */
export function newRunRecord(input: Omit<NewRun, 'seed' | 'watchBy'>, now: number): RunRecord {
  // Queued inside a span (an inbound message, a spawning tool call): the run continues its trace.
  const meta = withTraceMeta(input.meta);
  return {
    runId: input.runId ?? randomUUID(),
    sessionKey: input.sessionKey,
    lane: input.lane,
    status: 'queued',
    createdAt: now,
    updatedAt: now,
    message: input.message,
    deliver: input.deliver,
    attempts: 0,
    ...(input.spawnedBy ? { spawnedBy: input.spawnedBy } : {}),
    ...(input.extraSystemPrompt ? { extraSystemPrompt: input.extraSystemPrompt } : {}),
    ...(input.timeoutMs ? { timeoutMs: input.timeoutMs } : {}),
    ...(input.provenance ? { provenance: input.provenance } : {}),
    ...(meta ? { meta } : {}),
  };
}

/** Thrown inside the enqueue transaction to roll it back when its condition does not hold. */
const NOT_NOW = Symbol('colloquy.enqueue.condition');

/**
 * Builds the record of a session that `agent` creates (a sub-agent spawn, or an agent's main
 * session on first use): kind and agent from the key, depth and origin from the spawning session.
 *
 * @param ctx - the runtime internals
 * @param key - the normalised internal key
 * @param init - fields given by the caller
 * @param spawnedBy - the spawning session's key
 * @returns the record (not stored)
 * @throws `INVALID_ARGUMENT` for an unknown agent id; `SESSION_NOT_FOUND` when `spawnedBy` does not exist
 */
export async function newSessionRecord(
  ctx: RuntimeContext,
  key: string,
  init: AgentSessionInit,
  spawnedBy?: string,
): Promise<SessionRecord> {
  const { config, store } = ctx;
  const agentId = agentIdFromSessionKey(key) ?? defaultAgentId(config);
  const agent = agentConfigFor(config, agentId);
  if (!agent) {
    throw new ColloquyError(
      'INVALID_ARGUMENT',
      `agent: no agent "${agentId}" in agents.list; add it to the config or use one of: ${config.agents.list.map((a) => a.id).join(', ')}.`,
      { agentId },
    );
  }
  const parent = spawnedBy ? await store.getSession(spawnedBy) : undefined;
  if (spawnedBy && !parent) {
    throw new ColloquyError(
      'SESSION_NOT_FOUND',
      `agent: the spawning session "${spawnedBy}" does not exist.`,
      {
        key: spawnedBy,
      },
    );
  }
  const now = ctx.clock.now();
  const origin = init.requesterOrigin ?? (parent ? originOf(parent) : undefined);
  const record: SessionRecord = {
    key,
    sessionId: randomUUID(),
    agentId,
    kind: classifySessionKey(key, { mainKey: config.session.mainKey }),
    createdAt: now,
    updatedAt: now,
    status: 'idle',
    sandboxed: init.sandboxed ?? agent.sandboxed,
    spawnDepth: init.spawnDepth ?? (parent ? (parent.spawnDepth ?? 0) + 1 : 0),
  };
  if (spawnedBy) record.spawnedBy = spawnedBy;
  if (origin) record.requesterOrigin = origin;
  if (init.label) record.label = init.label;
  if (init.displayName) record.displayName = init.displayName;
  if (init.model) record.model = init.model;
  if (init.thinkingLevel) record.thinkingLevel = init.thinkingLevel;
  if (init.meta) record.meta = init.meta;
  return record;
}

/**
 * Where a session's chat is, as a spawn origin.
 *
 * @param session - the requester
 * @returns its key and delivery context
 */
export function originOf(session: SessionRecord): SessionOrigin {
  const to = session.deliveryContext;
  return {
    sessionKey: session.key,
    ...(to ? { channel: to.channel, to: to.to, accountId: to.accountId } : {}),
    ...(to?.threadId ? { threadId: to.threadId } : {}),
  };
}

/**
 * The lane a session's turns run on by default: sub-agents on `subagent`, cron jobs on `cron`,
 * everything else on `main`.
 *
 * @param session - the session
 * @returns the lane
 */
export function defaultLaneFor(session: Pick<SessionRecord, 'kind'>): Lane {
  if (session.kind === 'subagent') return 'subagent';
  if (session.kind === 'cron') return 'cron';
  return 'main';
}

/**
 * Whether a session's replies go to its chat by default: it has a delivery context and is not a
 * sub-agent (sub-agents report through announces).
 *
 * @param session - the session
 * @returns the default `deliver` flag
 */
export function defaultDeliverFor(session: Pick<SessionRecord, 'kind' | 'deliveryContext'>): boolean {
  return session.deliveryContext !== undefined && session.kind !== 'subagent';
}
