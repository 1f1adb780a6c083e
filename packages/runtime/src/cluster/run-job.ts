import type { RunRecord } from '@colloquy/core/gateway';
import type { StoreTransaction } from '@colloquy/core/store';
import { deliverUnsent } from '../agent/reply-delivery.js';
import { canFoldRuns, type QueuedRun, toQueuedRun } from '../queue/queued-run.js';
import { reviveRun } from '../runtime/recover-runs.js';
import type { RuntimeContext } from '../runtime/runtime-context.js';

/** The most runs one turn takes (the command queue's default batch). */
const MAX_BATCH = 32;

/**
 * Runs the shared-queue job of a run (see `ClusterAdapter`). The shared queue runs one job per
 * session at a time across all instances, so when a job starts nothing else of its session runs:
 * - runs of the session still `running` were left by an instance that died mid-turn; they are
 *   resumed or interrupted by the same rule as a restart (`runtime.staleRunMinutes`,
 *   `runtime.maxRunAttempts`);
 * - the session's oldest queued run leads the turn, and the queued runs behind it that may share it
 *   (the fold rule of the local queue) join; their own jobs find them no longer queued and end;
 * - the turn runs in this instance's command queue (its lane limits, timeouts and aborts), and the
 *   job ends when the turn has settled. A turn cut by a shutdown goes back to `queued` and gets a
 *   new job.
 *
 * @param ctx - the runtime internals
 * @param runId - the job's run
 */
export async function runJob(ctx: RuntimeContext, runId: string): Promise<void> {
  const run = await ctx.store.getRun(runId);
  if (!run) return;
  // An instance that died after the turn ended may not have sent the reply it planned.
  if (run.status !== 'queued' && run.status !== 'running') return deliverUnsent(ctx, [run]);
  if (ctx.queue.has(runId)) return;
  if (!ctx.accepting) {
    // Shutting down: leave the run to another instance (or to this one after its restart).
    await ctx.cluster?.requeueRun(run);
    return;
  }
  const batch = await takeTurn(ctx, run.sessionKey);
  const head = batch[0];
  if (!head) return;
  ctx.queue.enqueueAll(batch);
  await ctx.whenDone(head.id);
  const after = await ctx.store.getRun(head.id);
  if (after?.status === 'queued') await ctx.cluster?.requeueRun(after);
}

/** Revives what a dead instance left running, then returns the session's next turn, leader first. */
async function takeTurn(ctx: RuntimeContext, sessionKey: string): Promise<QueuedRun[]> {
  const now = ctx.clock.now();
  // Newest first: what is running, and what waits. One read while nothing was left running.
  let active = await ctx.store.listRuns({ sessionKey, statuses: ['queued', 'running'] });
  const stale = active.filter((run) => run.status === 'running');
  for (const run of stale) {
    if (await reviveRun(ctx, run, now)) continue;
    // Interrupted: its chat gets the notice it planned (plugins run here, unlike at a restart).
    const ended = await ctx.store.getRun(run.runId);
    if (ended) await deliverUnsent(ctx, [ended]);
  }
  // A revived run went back to `queued`: read the queue again.
  if (stale.length > 0) active = await ctx.store.listRuns({ sessionKey, statuses: ['queued'] });
  const queued = active.filter((run) => run.status === 'queued').reverse();
  const items = queued.map(toQueuedRun);
  const head = items[0];
  if (!head) return [];
  const batch = [head];
  for (const next of items.slice(1)) {
    if (batch.length >= MAX_BATCH || !canFoldRuns(head, next)) break;
    batch.push(next);
  }
  return batch;
}

/**
 * Whether a session has a run queued or running on any instance, read in `tx` (after the caller
 * locked the session row by writing it).
 *
 * @param tx - the open transaction
 * @param sessionKey - the session
 * @returns true when a run is active
 */
export async function hasActiveRun(tx: StoreTransaction, sessionKey: string): Promise<boolean> {
  const active: RunRecord[] = await tx.listRuns({ sessionKey, statuses: ['queued', 'running'], limit: 1 });
  return active.length > 0;
}
