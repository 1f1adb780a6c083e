import type { SessionRecord } from '@colloquy/core';
import { classifySessionKey } from '@colloquy/core/internal';
import { hasActiveRun } from '../cluster/run-job.js';
import type { RuntimeContext } from '../runtime/runtime-context.js';
import type { TurnEndHook } from '../runtime/turn-end-hook-types.js';
import { createAnnounceDelivery } from './announce-delivery.js';
import { createAnnounceDrain } from './announce-drain.js';
import { removeAttachments } from './attachment-files.js';
import { type CleanupDeps, finishChild, sweepSubagents } from './cleanup.js';
import { writeOutbox } from './outbox-writer.js';
import { steerSession, takeSteering } from './steer.js';
import type { SubagentRegistry, SubagentRuntimeOptions } from './subagent-registry.js';
import { sessionWorkspaceDir } from './workspace.js';

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
 *    one transaction with the row's `inboxAt` (see `createAnnounceDelivery`);
 * 3. no chat copy of the raw block: the requester's turn on it is the one chat message (its reply
 *    is planned with the end of that turn and sent once, see `deliverPlanned`);
 * 4. rows drain when the requester is idle (no running turn), one requester at a time; failures
 *    retry with exponential backoff (`attempts`, `nextAttemptAt`; see `createAnnounceDrain`);
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
  /** Nothing is delivered before `start()` (plugins are not running yet) or after `stop()`. */
  let state: 'created' | 'running' | 'stopped' = 'created';
  let pollTimer: NodeJS.Timeout | undefined;
  let sweepTimer: NodeJS.Timeout | undefined;

  const track = (work: Promise<unknown>): void => {
    ctx.track(work.catch((error: unknown) => log.warn({ err: error }, 'sub-agent background work failed')));
  };
  const finish = async (childKey: string): Promise<void> => {
    if (state !== 'running') return;
    await finishChild(ctx, cleanupDeps, childKey);
  };
  const delivery = createAnnounceDelivery(ctx, {
    retryBaseMs: opts.retryBaseMs,
    retryMaxMs: opts.retryMaxMs,
    track,
    finish,
  });
  const drains = createAnnounceDrain(ctx, { delivery, isRunning: () => state === 'running', track, finish });

  const cleanupDeps: CleanupDeps = {
    workspaceRoot,
    async isBusy(sessionKey) {
      if (ctx.queue.runningBatch(sessionKey) !== undefined || ctx.queue.pendingCount(sessionKey) > 0)
        return true;
      return ctx.cluster !== undefined && hasActiveRun(store, sessionKey);
    },
    async reconcile(runId) {
      const run = await store.getRun(runId);
      if (!run) return false;
      const rows = await store.transaction(async (tx) =>
        writeOutbox(tx, [run], await tx.getSession(run.sessionKey), ctx.clock.now(), mainKey, locate),
      );
      drains.afterWrite(rows);
      return rows.length > 0;
    },
  };

  const turnEndHook: TurnEndHook = async (runs, session, tx) => {
    const rows = await writeOutbox(tx, runs, session, ctx.clock.now(), mainKey, locate);
    if (rows.length === 0) return;
    if (ctx.cluster) {
      // The drain job commits with the rows, so an instance that dies now loses nothing.
      const requesters = new Set(rows.filter((row) => !row.skipped).map((row) => row.requesterSessionKey));
      for (const key of requesters) await ctx.cluster.scheduleDrain(key, tx);
      return () => drains.afterWrite(rows.filter((row) => row.skipped));
    }
    // Deliver once the rows are committed (a drain that read them earlier would not see them).
    return () => drains.afterWrite(rows);
  };

  const unsubscribe = ctx.events.subscribe((event) => {
    if (event.type !== 'session.deleted') return;
    if (drains.isWaiting(event.sessionKey)) drains.requestDrain(event.sessionKey);
    if (classifySessionKey(event.sessionKey, { mainKey }) === 'subagent') {
      track(removeAttachments(sessionWorkspaceDir(workspaceRoot, event.sessionKey)));
    }
  });

  return {
    turnEndHook,
    workspaceRoot,
    turnSettled(sessionKey) {
      if (drains.isWaiting(sessionKey)) setImmediate(() => drains.requestDrain(sessionKey));
    },
    steer: (sessionKey, message, provenance) => steerSession(ctx, steered, sessionKey, message, provenance),
    takeSteering: (sessionKey) => takeSteering(ctx, steered, sessionKey),
    drain: (drainOptions) => drains.drain(drainOptions),
    async drainRequester(requesterKey) {
      if (state === 'running') await drains.drainRequester(requesterKey, false);
    },
    noteSteered(sessionKey) {
      steered.add(sessionKey);
    },
    sweep: (now = ctx.clock.now()) => sweepSubagents(ctx, cleanupDeps, now),
    async start() {
      if (state !== 'created') return;
      state = 'running';
      drains.flush();
      await drains.drain({ force: true });
      await sweepSubagents(ctx, cleanupDeps, ctx.clock.now()).catch((error: unknown) =>
        log.warn({ err: error }, 'the sub-agent sweep failed'),
      );
      pollTimer = setInterval(() => {
        void drains.drain().catch((error: unknown) => log.warn({ err: error }, 'announce poll failed'));
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
      await drains.idle();
    },
  };
}
