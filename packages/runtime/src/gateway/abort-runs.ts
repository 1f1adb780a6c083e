import { randomUUID } from 'node:crypto';
import type { RunRecord } from '@colloquy/core/gateway';
import { type StoreTransaction, TERMINAL_RUN_STATUSES } from '@colloquy/core/store';
import { defaultLaneFor } from '../agent/enqueue-run.js';
import { turnInProgress } from '../agent/turn-in-progress.js';
import type { RuntimeContext } from '../runtime/runtime-context.js';
import { runTurnEndHooks } from '../runtime/turn-end-hooks.js';
import { YIELD_META_KEY, yieldStateOf } from '../runtime/yield-wake.js';

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
 * Stops a session: ends its yield (see {@link killYield}), then stops every queued and running run
 * of it (see {@link abortRuns}).
 *
 * @param ctx - the runtime internals
 * @param sessionKey - the session
 * @param reason - recorded as the runs' `error`
 * @returns the ids of the stopped runs, the run recording an ended yield first
 */
export async function abortSessionRuns(
  ctx: RuntimeContext,
  sessionKey: string,
  reason: string,
): Promise<string[]> {
  const yieldRun = await killYield(ctx, sessionKey, reason);
  const ids = new Set<string>();
  for (const item of ctx.queue.runningBatch(sessionKey) ?? []) ids.add(item.id);
  for (const item of ctx.queue.pendingItems(sessionKey)) ids.add(item.id);
  for (const run of await ctx.store.listRuns({ sessionKey, statuses: ['queued', 'running'] }))
    ids.add(run.runId);
  const aborted = await abortRuns(ctx, [...ids], reason);
  return yieldRun ? [yieldRun, ...aborted] : aborted;
}

/**
 * Ends the yield of a session that is being stopped, in ONE transaction: the yield is cleared and
 * the session becomes `killed` (a killed sub-agent is not woken by what reaches its inbox, see
 * `ctx.wake`), so neither the results it waited for nor its timeout wake it. When no run of the
 * session is queued or running to carry the kill (a queued wake is stopped by {@link abortRuns}),
 * the wait itself is recorded as a run ended `killed`, through the turn-end hooks like any run: a
 * sub-agent's is announced with Status: killed. Its timeout is disarmed. The yield is read from the
 * store, so this holds for a yield that survived a restart or was made on another instance.
 *
 * @param ctx - the runtime internals
 * @param sessionKey - the session
 * @param reason - recorded as the run's `error`
 * @returns the id of the run recording the ended wait, if one was written
 */
async function killYield(
  ctx: RuntimeContext,
  sessionKey: string,
  reason: string,
): Promise<string | undefined> {
  const now = ctx.clock.now();
  let ended = false;
  const run = await recordKill(ctx, async (tx) => {
    const session = await tx.getSession(sessionKey);
    const state = yieldStateOf(session);
    if (!session || !state) return undefined;
    ended = true;
    const { [YIELD_META_KEY]: _ended, ...meta } = session.meta ?? {};
    await tx.patchSession(sessionKey, {
      meta,
      status: 'killed',
      abortedLastRun: true,
      endedAt: now,
      updatedAt: now,
    });
    if ((await tx.listRuns({ sessionKey, statuses: ['queued', 'running'], limit: 1 })).length > 0) {
      return undefined;
    }
    const wait: RunRecord = {
      runId: randomUUID(),
      sessionKey,
      lane: defaultLaneFor(session),
      status: 'killed',
      createdAt: now,
      updatedAt: now,
      endedAt: now,
      message: '',
      // It delivers nothing: a sub-agent's end goes to its requester as an announce.
      deliver: false,
      attempts: 0,
      error: reason,
      ...(session.spawnedBy ? { spawnedBy: session.spawnedBy } : {}),
      meta: { endedYield: state.id },
    };
    await tx.createRun(wait);
    return wait;
  });
  if (!ended) return undefined;
  ctx.yields.disarm(sessionKey);
  ctx.events.emit({ type: 'session.updated', sessionKey });
  return run?.runId;
}

async function markKilled(ctx: RuntimeContext, runId: string, reason: string): Promise<void> {
  const now = ctx.clock.now();
  await recordKill(ctx, async (tx) => {
    const updated = await tx.updateRun(runId, {
      status: 'killed',
      error: reason,
      endedAt: now,
      updatedAt: now,
    });
    const session = await tx.getSession(updated.sessionKey);
    if (session?.status === 'running' && !turnInProgress(ctx, session.key)) {
      await tx.patchSession(session.key, {
        status: 'killed',
        abortedLastRun: true,
        endedAt: now,
        updatedAt: now,
      });
    }
    return updated;
  });
}

/**
 * Commits a run's kill, written by `write` in one transaction with the same hooks as a turn's end
 * (a killed sub-agent run is announced with Status: killed), then publishes `run.ended`.
 *
 * @returns the killed run, or undefined when `write` recorded none
 */
async function recordKill(
  ctx: RuntimeContext,
  write: (tx: StoreTransaction) => Promise<RunRecord | undefined>,
): Promise<RunRecord | undefined> {
  const killed = await ctx.store.transaction(async (tx) => {
    const run = await write(tx);
    if (!run) return undefined;
    const session = await tx.getSession(run.sessionKey);
    return { run, afterCommit: await runTurnEndHooks(ctx, [run], session, tx) };
  });
  if (!killed) return undefined;
  killed.afterCommit();
  const { run } = killed;
  ctx.events.emit({
    type: 'run.ended',
    runId: run.runId,
    sessionKey: run.sessionKey,
    status: 'killed',
    ...(run.error ? { error: run.error } : {}),
  });
  return run;
}
