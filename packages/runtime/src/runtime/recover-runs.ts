import type { RunRecord } from '@colloquy/core';
import { toQueuedRun } from '../queue/queued-run.js';
import type { RuntimeContext } from './runtime-context.js';
import { runTurnEndHooks } from './turn-end-hooks.js';

/** What {@link recoverRuns} did at start. */
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
  const { store, config } = ctx;
  const report: RecoveryReport = { requeued: [], resumed: [], interrupted: [] };
  const now = ctx.clock.now();
  const staleMs = config.runtime.staleRunMinutes * 60_000;
  const toQueue: RunRecord[] = [];
  for (const run of await store.listRuns({ statuses: ['running'] })) {
    const fresh = now - run.updatedAt <= staleMs;
    if (fresh && run.attempts < config.runtime.maxRunAttempts) {
      toQueue.push(
        await store.updateRun(run.runId, {
          status: 'queued',
          updatedAt: now,
          meta: { ...run.meta, resumedAt: now },
        }),
      );
      report.resumed.push(run.runId);
      continue;
    }
    await interrupt(run);
  }

  /** Finalises a run the restart will not resume as `interrupted`, with the turn-end hooks (announce). */
  async function interrupt(run: RunRecord): Promise<void> {
    const fresh = now - run.updatedAt <= staleMs;
    const why = fresh
      ? `it was started ${run.attempts} times (runtime.maxRunAttempts = ${config.runtime.maxRunAttempts})`
      : `it was last active more than ${config.runtime.staleRunMinutes} minutes ago (runtime.staleRunMinutes)`;
    const error = `The runtime stopped during this run and did not resume it: ${why}. Send the message again.`;
    const afterCommit = await store.transaction(async (tx) => {
      const ended = await tx.updateRun(run.runId, {
        status: 'interrupted',
        error,
        endedAt: now,
        updatedAt: now,
      });
      const session = await tx.getSession(run.sessionKey);
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
    report.interrupted.push(run.runId);
  }
  const queued: RunRecord[] = [];
  const staleQueued: RunRecord[] = [];
  for (const run of await store.listRuns({ statuses: ['queued'] })) {
    if (report.resumed.includes(run.runId)) continue;
    const fresh = now - run.updatedAt <= staleMs;
    (fresh && run.attempts < config.runtime.maxRunAttempts ? queued : staleQueued).push(run);
  }
  for (const run of staleQueued) await interrupt(run);
  for (const run of queued) report.requeued.push(run.runId);
  const all = [...toQueue, ...queued].sort((a, b) => a.createdAt - b.createdAt);
  for (const run of all) {
    if (!ctx.queue.has(run.runId)) ctx.queue.enqueue(toQueuedRun(run));
  }
  return report;
}
