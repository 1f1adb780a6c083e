import {
  type AgentRunResult,
  type AnnounceOutcome,
  agentIdFromSessionKey,
  backoffDelay,
  classifySessionKey,
  defaultAgentId,
  isColloquyError,
  type MessageProvenance,
  type ModelMessage,
  mainSessionKey,
  type OutboxEntry,
  type SessionRecord,
  type StoreTransaction,
  toColloquyError,
} from '@colloquy/core';
import { hasActiveRun } from '../cluster/run-job.js';
import type { RuntimeContext, TurnEndHook } from '../runtime/runtime-context.js';
import {
  type AnnouncePayload,
  announceInboxId,
  announceMessage,
  type ChatOutcome,
  originTarget,
} from './announce.js';
import { removeAttachments } from './attachment-files.js';
import { type CleanupDeps, finishChild, type SweepReport, sweepSubagents } from './cleanup.js';
import { writeOutbox } from './outbox-writer.js';
import { steerSession, takeSteering } from './steer.js';
import { sessionWorkspaceDir } from './workspace.js';

/** Tuning of announce delivery and the sub-agent sweep. */
export interface SubagentRuntimeOptions {
  /** First retry delay of a failed announce delivery (to the inbox); doubles each attempt. Default 1000 ms. */
  retryBaseMs?: number;
  /** The longest retry delay. Default 300,000 ms (5 minutes). */
  retryMaxMs?: number;
  /** How often due outbox rows are looked for. Default 1000 ms. */
  pollMs?: number;
  /** How often the archive/cleanup sweep runs. Default 60,000 ms. */
  sweepMs?: number;
}

/** The sub-agent machinery of a runtime: the announce outbox, its delivery, steering and cleanup. */
export interface SubagentRegistry {
  /** Writes outbox rows inside the transaction that ends a run (registered as a turn-end hook). */
  readonly turnEndHook: TurnEndHook;
  /** The root of session workspaces (attachments). */
  readonly workspaceRoot: string;
  /** Tells the registry that a session's turn settled (its queue slot is free). */
  turnSettled(sessionKey: string): void;
  /** `agent` with `steer: true` (see `steerSession`). */
  steer(
    sessionKey: string,
    message: string,
    provenance: MessageProvenance | undefined,
  ): Promise<AgentRunResult>;
  /** Steering messages for a running turn, before its next model step. */
  takeSteering(sessionKey: string): Promise<ModelMessage[]>;
  /** Delivers every due pending announce now (`force`: also those waiting for a retry). */
  drain(options?: { force?: boolean }): Promise<void>;
  /** Delivers the due pending announces of one requester (a cluster's drain job). */
  drainRequester(requesterSessionKey: string): Promise<void>;
  /** Tells the registry that a steering message waits for the session's running turn. */
  noteSteered(sessionKey: string): void;
  /** Archives, deletes and reconciles (see `sweepSubagents`). */
  sweep(now?: number): Promise<SweepReport>;
  /** Delivers what the previous process left pending and starts the timers. */
  start(): Promise<void>;
  /** Stops the timers and waits for deliveries in flight. */
  stop(): Promise<void>;
}

const DEFAULTS: Required<SubagentRuntimeOptions> = {
  retryBaseMs: 1000,
  retryMaxMs: 300_000,
  pollMs: 1000,
  sweepMs: 60_000,
};

/**
 * Creates the sub-agent registry. Exactly-once delivery of each completion rests on:
 * 1. the outbox row is written in the same transaction that ends the child's run (`turnEndHook`);
 * 2. the requester's inbox entry is insert-or-ignore with id `announce:<child>:<runId>`, written in
 *    one transaction with the row's `inboxAt`;
 * 3. no chat copy of the raw block: the requester's turn on it is the one chat message (its reply
 *    is planned with the end of that turn and sent once, see `deliverPlanned`);
 * 4. rows drain when the requester is idle (no running turn), one requester at a time; failures
 *    retry with exponential backoff (`attempts`, `nextAttemptAt`);
 * 5. a requester that no longer exists gets the result parked in its agent's main session inbox.
 *
 * @param ctx - the runtime internals
 * @param workspaceRoot - the root of session workspaces
 * @param options - delivery and sweep tuning
 * @returns the registry
 */
export function createSubagentRegistry(
  ctx: RuntimeContext,
  workspaceRoot: string,
  options: SubagentRuntimeOptions = {},
): SubagentRegistry {
  const opts = { ...DEFAULTS, ...options };
  const { store, log } = ctx;
  const mainKey = ctx.config.session.mainKey;
  const locate = (session: SessionRecord) => store.transcriptLocator(session);
  const steered = new Set<string>();
  /** Requesters with pending rows (a hint: the store is the truth). */
  const waiting = new Set<string>();
  /** Requesters with rows written since the last flush. */
  const fresh = new Set<string>();
  const draining = new Map<string, Promise<void>>();
  const again = new Set<string>();
  const toFinish = new Set<string>();
  let flushScheduled = false;
  /** Nothing is delivered before `start()` (plugins are not running yet) or after `stop()`. */
  let state: 'created' | 'running' | 'stopped' = 'created';
  let pollTimer: NodeJS.Timeout | undefined;
  let sweepTimer: NodeJS.Timeout | undefined;

  const cleanupDeps: CleanupDeps = {
    workspaceRoot,
    isBusy,
    async reconcile(runId) {
      const run = await store.getRun(runId);
      if (!run) return false;
      const rows = await store.transaction(async (tx) =>
        writeOutbox(tx, [run], await tx.getSession(run.sessionKey), ctx.clock.now(), mainKey, locate),
      );
      afterWrite(rows);
      return rows.length > 0;
    },
  };

  async function isBusy(sessionKey: string): Promise<boolean> {
    if (ctx.queue.runningBatch(sessionKey) !== undefined || ctx.queue.pendingCount(sessionKey) > 0)
      return true;
    return ctx.cluster !== undefined && hasActiveRun(store, sessionKey);
  }

  const turnEndHook: TurnEndHook = async (runs, session, tx) => {
    const rows = await writeOutbox(tx, runs, session, ctx.clock.now(), mainKey, locate);
    if (rows.length === 0) return;
    if (ctx.cluster) {
      // The drain job commits with the rows, so an instance that dies now loses nothing.
      const requesters = new Set(rows.filter((row) => !row.skipped).map((row) => row.requesterSessionKey));
      for (const key of requesters) await ctx.cluster.scheduleDrain(key, tx);
      return () => afterWrite(rows.filter((row) => row.skipped));
    }
    // Deliver once the rows are committed (a drain that read them earlier would not see them).
    return () => afterWrite(rows);
  };

  function afterWrite(
    rows: readonly { requesterSessionKey: string; childSessionKey: string; skipped: boolean }[],
  ) {
    for (const row of rows) {
      if (row.skipped) toFinish.add(row.childSessionKey);
      else {
        waiting.add(row.requesterSessionKey);
        fresh.add(row.requesterSessionKey);
      }
    }
    scheduleFlush();
  }

  /** Drains what was written, at the end of this event-loop turn (batching every commit in it). */
  function scheduleFlush(): void {
    if (flushScheduled || state !== 'running') return;
    flushScheduled = true;
    setImmediate(() => {
      flushScheduled = false;
      for (const key of [...fresh]) {
        fresh.delete(key);
        requestDrain(key);
      }
      for (const child of [...toFinish]) {
        toFinish.delete(child);
        track(finish(child));
      }
    });
  }

  function track(work: Promise<unknown>): void {
    ctx.track(work.catch((error: unknown) => log.warn({ err: error }, 'sub-agent background work failed')));
  }

  function requestDrain(requesterKey: string, force = false): void {
    if (state !== 'running') return;
    if (ctx.cluster) {
      // One drain per requester across instances: its job runs in the requester's queue.
      track(ctx.cluster.requestDrain(requesterKey));
      return;
    }
    if (draining.has(requesterKey)) {
      again.add(requesterKey);
      return;
    }
    const work = (async () => {
      do {
        again.delete(requesterKey);
        await drainRequester(requesterKey, force);
      } while (again.has(requesterKey) && state === 'running');
    })().finally(() => draining.delete(requesterKey));
    draining.set(requesterKey, work);
    track(work);
  }

  async function drainRequester(requesterKey: string, force: boolean): Promise<void> {
    const now = ctx.clock.now();
    const rows = await store.listOutbox({
      statuses: ['pending'],
      requesterSessionKey: requesterKey,
      ...(force ? {} : { dueBefore: now }),
    });
    if (rows.length === 0) {
      const left = await store.listOutbox({
        statuses: ['pending'],
        requesterSessionKey: requesterKey,
        limit: 1,
      });
      if (left.length === 0) waiting.delete(requesterKey);
      return;
    }
    const requester = await store.getSession(requesterKey);
    if (!requester) {
      for (const row of rows) await guarded(row, () => park(row));
      return;
    }
    // Busy: the running turn could not read it anyway; its end drains again (turnSettled).
    if (ctx.queue.runningBatch(requesterKey)) return;
    try {
      await putInInbox(rows, requester);
    } catch (error) {
      for (const row of rows) await retryLater(row, error);
      return;
    }
    for (const row of rows) {
      if (state !== 'running') return;
      await guarded(row, () => settle(row, requester));
    }
    if (ctx.autoWake && !(requester.kind === 'subagent' && requester.status === 'killed')) {
      try {
        await ctx.wake(requesterKey);
      } catch (error) {
        log.warn({ err: error, sessionKey: requesterKey }, 'could not wake the requester after an announce');
      }
    }
  }

  /**
   * Step 1: the requester's inbox, for every row at once: insert-or-ignore, with each row's
   * `inboxAt`, in one transaction.
   */
  async function putInInbox(rows: readonly OutboxEntry[], requester: SessionRecord): Promise<void> {
    const now = ctx.clock.now();
    // A requester's rows are written by its own drain only, one drain at a time: the listed rows
    // are current, so they need no second read.
    const todo = rows.filter((row) => row.status === 'pending' && row.inboxAt === undefined);
    if (todo.length === 0) return;
    await store.transaction(async (tx) => {
      for (const row of todo) {
        const payload = row.payload as unknown as AnnouncePayload;
        await tx.putInbox({
          sessionKey: requester.key,
          id: announceInboxId(row.childSessionKey, row.runId),
          message: announceMessage(payload, now),
          createdAt: now,
        });
        await tx.updateOutbox(row.childSessionKey, row.runId, { inboxAt: now, updatedAt: now });
      }
    });
    for (const row of todo) row.inboxAt = now;
  }

  /**
   * Step 2: settles a row that is in the inbox. The raw block is never posted to a chat: the
   * requester's turn on it (the wake that follows) is the one chat message about the result, in its
   * own voice, or the plain fallback line when it cannot answer (see `announceFallback`). The block
   * goes to the log and stays in the requester's transcript, where the owner reads it.
   */
  async function settle(current: OutboxEntry, requester: SessionRecord): Promise<void> {
    if (current.status !== 'pending' || current.inboxAt === undefined) return;
    const payload = current.payload as unknown as AnnouncePayload;
    const at = ctx.clock.now();
    const chat: ChatOutcome = {
      outcome: 'skipped',
      at,
      reason: originTarget(payload.origin)
        ? "the requester's own reply to it is the chat message"
        : 'the requester has no chat',
    };
    log.info(
      {
        childSessionKey: current.childSessionKey,
        runId: current.runId,
        requester: requester.key,
        status: payload.status,
        announce: payload.text,
      },
      'a sub-agent finished; its result is in the requester inbox',
    );
    await store.transaction(async (tx) => {
      await tx.updateOutbox(current.childSessionKey, current.runId, {
        status: 'delivered',
        deliveredAt: at,
        updatedAt: at,
        payload: { ...payload, chat } as unknown as Record<string, unknown>,
      });
      await recordOutcome(tx, current.runId, outcomeOf(chat, at));
    });
    current.status = 'delivered';
    if (payload.needsCleanup) track(finish(current.childSessionKey));
  }

  /** The requester is gone: the result goes to its agent's main session inbox, never dropped. */
  async function park(row: OutboxEntry): Promise<void> {
    const agentId = agentIdFromSessionKey(row.requesterSessionKey) ?? defaultAgentId(ctx.config);
    const owner = mainSessionKey({ agentId, mainKey, scope: ctx.config.session.scope });
    const now = ctx.clock.now();
    await store.transaction(async (tx) => {
      const current = await tx.getOutbox(row.childSessionKey, row.runId);
      if (current?.status !== 'pending') return;
      const payload = { ...(current.payload as unknown as AnnouncePayload), parkedIn: owner };
      await tx.putInbox({
        sessionKey: owner,
        id: announceInboxId(row.childSessionKey, row.runId),
        message: announceMessage(payload, now),
        createdAt: now,
      });
      await tx.updateOutbox(row.childSessionKey, row.runId, {
        status: 'parked',
        inboxAt: now,
        deliveredAt: now,
        updatedAt: now,
        payload: payload as unknown as Record<string, unknown>,
      });
      await recordOutcome(tx, row.runId, {
        outcome: 'delivered',
        reason: `parked in ${owner}: the requester ${row.requesterSessionKey} no longer exists`,
        at: now,
      });
    });
    track(finish(row.childSessionKey));
  }

  /** Records how the announce ended on the run (runs are never deleted; a missing one is skipped). */
  async function recordOutcome(
    tx: StoreTransaction,
    runId: string,
    announce: AnnounceOutcome,
  ): Promise<void> {
    try {
      await tx.updateRun(runId, { announce });
    } catch (error) {
      if (!isColloquyError(error) || error.code !== 'RUN_NOT_FOUND') throw error;
    }
  }

  async function finish(childKey: string): Promise<void> {
    if (state !== 'running') return;
    await finishChild(ctx, cleanupDeps, childKey);
  }

  async function guarded(row: OutboxEntry, step: () => Promise<void>): Promise<void> {
    try {
      await step();
    } catch (error) {
      await retryLater(row, error);
    }
  }

  async function retryLater(row: OutboxEntry, error: unknown): Promise<void> {
    const message = toColloquyError(error).message;
    log.warn(
      { err: error, childSessionKey: row.childSessionKey, runId: row.runId },
      'announce delivery failed; retrying',
    );
    try {
      const current = await store.getOutbox(row.childSessionKey, row.runId);
      if (current?.status !== 'pending') return;
      const attempts = current.attempts + 1;
      const at = ctx.clock.now();
      await store.updateOutbox(row.childSessionKey, row.runId, {
        attempts,
        nextAttemptAt: at + backoff(attempts),
        lastError: message,
        updatedAt: at,
      });
    } catch (inner) {
      log.warn({ err: inner }, 'could not record an announce failure; the poll will retry');
    }
  }

  /** Deterministic (no jitter): the outbox row records when its next attempt is due. */
  function backoff(attempts: number): number {
    return backoffDelay(attempts - 1, {
      initialDelayMs: opts.retryBaseMs,
      maxDelayMs: opts.retryMaxMs,
      jitter: 0,
    });
  }

  async function drain(drainOptions: { force?: boolean } = {}): Promise<void> {
    const now = ctx.clock.now();
    const rows = await store.listOutbox({
      statuses: ['pending'],
      ...(drainOptions.force ? {} : { dueBefore: now }),
    });
    const keys = new Set(rows.map((row) => row.requesterSessionKey));
    for (const key of keys) {
      waiting.add(key);
      requestDrain(key, drainOptions.force ?? false);
    }
    await Promise.all([...draining.values()]);
  }

  const unsubscribe = ctx.events.subscribe((event) => {
    if (event.type !== 'session.deleted') return;
    if (waiting.has(event.sessionKey)) requestDrain(event.sessionKey);
    if (classifySessionKey(event.sessionKey, { mainKey }) === 'subagent') {
      track(removeAttachments(sessionWorkspaceDir(workspaceRoot, event.sessionKey)));
    }
  });

  return {
    turnEndHook,
    workspaceRoot,
    turnSettled(sessionKey) {
      if (waiting.has(sessionKey)) setImmediate(() => requestDrain(sessionKey));
    },
    steer: (sessionKey, message, provenance) => steerSession(ctx, steered, sessionKey, message, provenance),
    takeSteering: (sessionKey) => takeSteering(ctx, steered, sessionKey),
    drain,
    async drainRequester(requesterKey) {
      if (state === 'running') await drainRequester(requesterKey, false);
    },
    noteSteered(sessionKey) {
      steered.add(sessionKey);
    },
    sweep: (now = ctx.clock.now()) => sweepSubagents(ctx, cleanupDeps, now),
    async start() {
      if (state !== 'created') return;
      state = 'running';
      scheduleFlush();
      await drain({ force: true });
      await sweepSubagents(ctx, cleanupDeps, ctx.clock.now()).catch((error: unknown) =>
        log.warn({ err: error }, 'the sub-agent sweep failed'),
      );
      pollTimer = setInterval(() => {
        void drain().catch((error: unknown) => log.warn({ err: error }, 'announce poll failed'));
      }, opts.pollMs);
      pollTimer.unref();
      sweepTimer = setInterval(() => {
        track(sweepSubagents(ctx, cleanupDeps, ctx.clock.now()));
      }, opts.sweepMs);
      sweepTimer.unref();
    },
    async stop() {
      state = 'stopped';
      if (pollTimer) clearInterval(pollTimer);
      if (sweepTimer) clearInterval(sweepTimer);
      unsubscribe();
      await Promise.all([...draining.values()]);
    },
  };
}

function outcomeOf(chat: ChatOutcome, at: number): AnnounceOutcome {
  return { outcome: 'delivered', reason: `in the requester inbox; ${chat.reason ?? ''}`.trim(), at };
}
