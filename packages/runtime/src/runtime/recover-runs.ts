import type { RunRecord } from '@colloquy/core/gateway';
import { planReply } from '../agent/reply-delivery.js';
import { toQueuedRun } from '../queue/queued-run.js';
import type { RuntimeContext } from './runtime-context.js';
import { runTurnEndHooks } from './turn-end-hooks.js';

/** What the start-up recovery did. */
export interface RecoveryReport {
  /** Runs found `queued` (waiting, or cut by a graceful shutdown) and queued again. */
  requeued: string[];
  /** Runs found `running` (the process died mid-run) that were fresh enough and under the attempt limit. */
  resumed: string[];
  /** Runs found `running` that were stale or over `runtime.maxRunAttempts`, now `interrupted`. */
  interrupted: string[];
}

/**
 * Restart recovery, run once by `start()` before anything else is queued:
 * - `queued` runs (waiting, or cut by a graceful shutdown) and `running` runs (a crash) are queued
 *   again, oldest first, when their last update is within `runtime.staleRunMinutes` and they
 *   started fewer than `runtime.maxRunAttempts` times; the rest become `interrupted`
 *   (with the turn-end hooks run in the same transaction, so an announce can follow). Nothing is
 *   deleted.
 *
 * @param ctx - the runtime internals
 * @returns which runs went where
 */
export async function recoverRuns(ctx: RuntimeContext): Promise<RecoveryReport> {
  const { store } = ctx;
  const report: RecoveryReport = { requeued: [], resumed: [], interrupted: [] };
  const now = ctx.clock.now();
  const toQueue: RunRecord[] = [];
  for (const run of await store.listRuns({ statuses: ['running'] })) {
    const revived = await reviveRun(ctx, run, now);
    if (revived) {
      toQueue.push(revived);
      report.resumed.push(run.runId);
    } else report.interrupted.push(run.runId);
  }
  const queued: RunRecord[] = [];
  for (const run of await store.listRuns({ statuses: ['queued'] })) {
    if (report.resumed.includes(run.runId)) continue;
    if (isRevivable(ctx, run, now)) {
      queued.push(run);
      report.requeued.push(run.runId);
    } else {
      await interruptRun(ctx, run, now);
      report.interrupted.push(run.runId);
    }
  }
  const all = [...toQueue, ...queued].sort((a, b) => a.createdAt - b.createdAt);
  for (const run of all) {
    if (!ctx.queue.has(run.runId)) ctx.queue.enqueue(toQueuedRun(run));
  }
  return report;
}

/**
 * A run the runtime that ran it left `running` (it died mid-turn): queued again (`resumedAt` in
 * its meta) when its last update is within `runtime.staleRunMinutes` and it started fewer than
 * `runtime.maxRunAttempts` times, else finalised as `interrupted` with the turn-end hooks (so a
 * sub-agent's run is still announced).
 *
 * @param ctx - the runtime internals
 * @param run - the run found `running`
 * @param now - epoch ms
 * @returns the run, now `queued`; `undefined` when it was interrupted
 */
export async function reviveRun(
  ctx: RuntimeContext,
  run: RunRecord,
  now: number,
): Promise<RunRecord | undefined> {
  if (!isRevivable(ctx, run, now)) {
    await interruptRun(ctx, run, now);
    return undefined;
  }
  return ctx.store.updateRun(run.runId, {
    status: 'queued',
    updatedAt: now,
    meta: { ...run.meta, resumedAt: now },
  });
}

function isRevivable(ctx: RuntimeContext, run: RunRecord, now: number): boolean {
  const { runtime } = ctx.config;
  return now - run.updatedAt <= runtime.staleRunMinutes * 60_000 && run.attempts < runtime.maxRunAttempts;
}

/** Finalises a run the restart will not resume as `interrupted`, with the turn-end hooks (announce). */
async function interruptRun(ctx: RuntimeContext, run: RunRecord, now: number): Promise<void> {
  const { runtime } = ctx.config;
  const fresh = now - run.updatedAt <= runtime.staleRunMinutes * 60_000;
  const why = fresh
    ? `it was started ${run.attempts} times (runtime.maxRunAttempts = ${runtime.maxRunAttempts})`
    : `it was last active more than ${runtime.staleRunMinutes} minutes ago (runtime.staleRunMinutes)`;
  const error = `The runtime stopped during this run and did not resume it: ${why}. Send the message again.`;
  const afterCommit = await ctx.store.transaction(async (tx) => {
    const session = await tx.getSession(run.sessionKey);
    // The chat is told, once: the notice, or the fallback lines of the results the turn had read.
    const plan =
      session && run.meta?.foldedInto === undefined
        ? planReply(session, run, { status: 'error', error, notice: error })
        : undefined;
    const ended = await tx.updateRun(run.runId, {
      status: 'interrupted',
      error,
      endedAt: now,
      updatedAt: now,
      ...(plan ? { meta: { ...run.meta, pendingDelivery: plan } } : {}),
    });
    const updated =
      session?.status === 'running'
        ? await tx.patchSession(session.key, { status: 'error', endedAt: now, updatedAt: now })
        : session;
    return runTurnEndHooks(ctx, [ended], updated, tx);
  });
  afterCommit();
  ctx.events.emit({
    type: 'run.ended',
    runId: run.runId,
    sessionKey: run.sessionKey,
    status: 'interrupted',
    error,
  });
}

/**
 * Wakes every session with unread inbox entries, once at start: an entry stored just before a
 * crash (an announce, a watch notice, a yield timeout) may have lost the wake that would read it.
 * A session with a run queued or running is left alone (that run reads its inbox).
 *
 * @param ctx - the runtime internals
 */
export async function wakeUnreadInboxes(ctx: RuntimeContext): Promise<void> {
  for (const key of await ctx.store.listInboxSessionKeys()) {
    if (!ctx.accepting) return;
    await ctx
      .wake(key)
      .catch((error: unknown) =>
        ctx.log.warn({ err: error, sessionKey: key }, 'could not wake a session with unread inbox entries'),
      );
  }
}
