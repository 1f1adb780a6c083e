import { TERMINAL_RUN_STATUSES } from '@colloquy/core';
import type { RuntimeContext } from '../runtime/runtime-context.js';
import { runTurnEndHooks } from '../runtime/turn-end-hooks.js';

/** How long an abort waits for a running turn to record its end. */
const SETTLE_MS = 5_000;

/**
 * Stops runs: waiting ones are removed from the queue and marked `killed` at once; running ones
 * have their signal aborted and are awaited (up to 5 s) until the executor records `killed`; runs
 * the store still shows active but no queue holds (left by a crash) are marked `killed` directly.
 *
 * @param ctx - the runtime internals
 * @param runIds - the runs to stop
 * @param reason - recorded as the runs' `error`
 * @returns the ids of the runs that were stopped (folded companions of a running turn included)
 */
export async function abortRuns(
  ctx: RuntimeContext,
  runIds: readonly string[],
  reason: string,
): Promise<string[]> {
  const aborted = new Set<string>();
  const settling: Promise<boolean>[] = [];
  for (const runId of runIds) {
    if (aborted.has(runId)) continue;
    const run = await ctx.store.getRun(runId);
    if (!run || TERMINAL_RUN_STATUSES.includes(run.status)) continue;
    const found = ctx.queue.abort(runId, 'killed', reason);
    if (found.state === 'running') {
      for (const item of found.batch) {
        if (aborted.has(item.id)) continue;
        aborted.add(item.id);
        settling.push(ctx.waiters.wait(item.id, SETTLE_MS));
      }
      continue;
    }
    if (found.state === 'unknown' && run.status === 'running' && ctx.cluster) {
      // It runs on another instance (or ran on one that died): ask, then wait for its end.
      await ctx.cluster.publish({ type: 'run.abort', runId, reason });
      const ended = await ctx.waiters.wait(runId, SETTLE_MS);
      const after = ended ? await ctx.store.getRun(runId) : undefined;
      if (after && TERMINAL_RUN_STATUSES.includes(after.status)) {
        aborted.add(runId);
        continue;
      }
    }
    await markKilled(ctx, runId, reason);
    aborted.add(runId);
  }
  await Promise.all(settling);
  return [...aborted];
}

/**
 * Stops every queued and running run of a session (see {@link abortRuns}).
 *
 * @param ctx - the runtime internals
 * @param sessionKey - the session
 * @param reason - recorded as the runs' `error`
 * @returns the ids of the stopped runs
 */
export async function abortSessionRuns(
  ctx: RuntimeContext,
  sessionKey: string,
  reason: string,
): Promise<string[]> {
  const ids = new Set<string>();
  for (const item of ctx.queue.runningBatch(sessionKey) ?? []) ids.add(item.id);
  for (const item of ctx.queue.pendingItems(sessionKey)) ids.add(item.id);
  for (const run of await ctx.store.listRuns({ sessionKey, statuses: ['queued', 'running'] }))
    ids.add(run.runId);
  return abortRuns(ctx, [...ids], reason);
}

async function markKilled(ctx: RuntimeContext, runId: string, reason: string): Promise<void> {
  const now = ctx.clock.now();
  const { run, afterCommit } = await ctx.store.transaction(async (tx) => {
    const updated = await tx.updateRun(runId, {
      status: 'killed',
      error: reason,
      endedAt: now,
      updatedAt: now,
    });
    const session = await tx.getSession(updated.sessionKey);
    if (session?.status === 'running' && !ctx.queue.runningBatch(session.key)) {
      await tx.patchSession(session.key, {
        status: 'killed',
        abortedLastRun: true,
        endedAt: now,
        updatedAt: now,
      });
    }
    // The same hooks as a turn's end: a killed sub-agent run is announced with Status: killed.
    const after = await tx.getSession(updated.sessionKey);
    return { run: updated, afterCommit: await runTurnEndHooks(ctx, [updated], after, tx) };
  });
  afterCommit();
  ctx.events.emit({ type: 'run.ended', runId, sessionKey: run.sessionKey, status: 'killed', error: reason });
}
