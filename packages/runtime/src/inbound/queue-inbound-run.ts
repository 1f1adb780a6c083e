import type { InboundMessage } from '@colloquy/core';
import type { RunRecord } from '@colloquy/core/gateway';
import {
  type InboundCommit,
  type InboundCommitResult,
  type Store,
  turnOperations,
} from '@colloquy/core/store';
import { newRunRecord } from '../agent/enqueue-run.js';
import { hasHeldTurns, joinHeldTurns } from '../agent/provider-outage.js';
import { inputMessage } from '../agent/run-lifecycle.js';
import { turnInProgress } from '../agent/turn-in-progress.js';
import type { ClusterAdapter } from '../cluster/cluster-adapter.js';
import { toQueuedRun } from '../queue/queued-run.js';
import type { RuntimeContext } from '../runtime/runtime-context.js';
import { inboundSessionUpdate, newInboundSession } from './session-for-inbound.js';

/** The run of an addressed inbound message, as `receiveInbound` makes it. */
export interface InboundRun {
  runId: string;
  sessionKey: string;
  lane: RunRecord['lane'];
  meta: Record<string, unknown>;
}

/**
 * Stores an addressed inbound message as a run with ONE store operation (`commitInbound`) and
 * hands the run to the command queue: the session is created or updated with the chat as its
 * delivery context, and, when nothing else of the session is queued or running here (a turn that
 * stored its end and only sends its reply counts as done) and its lane has room, the turn begins in
 * the same commit (input appended, run and session `running`), so the executor goes straight to the
 * model once the session's previous turn has returned. Otherwise the run waits, `queued`, and its turn begins
 * when the queue starts it; while a provider outage holds turns of the session, it waits with them
 * (see `holdTurn`). With a cluster the turn never begins here: the run is stored `queued` and its
 * job is added in the same transaction (see {@link commitWithJob}), and whichever instance takes
 * the job runs the turn.
 *
 * @param ctx - the runtime internals
 * @param inbound - the message
 * @param run - its run id, session, lane and meta
 * @param now - epoch ms
 * @returns the stored run, or `undefined` when a run with its id was stored before (a message the
 *   platform delivered again)
 */
export async function queueInboundRun(
  ctx: RuntimeContext,
  inbound: InboundMessage,
  run: InboundRun,
  now: number,
): Promise<RunRecord | undefined> {
  const key = run.sessionKey;
  const queued = newRunRecord({ ...run, message: inbound.text, deliver: true }, now);
  const update = inboundSessionUpdate(inbound, now);
  // A lane slot another session takes before this commit lands only makes the begun turn wait in
  // the queue, still `running` in the store: the lane limit holds either way. Turns a provider
  // outage holds go first: the run waits with them.
  const { cluster } = ctx;
  const mayBegin =
    !cluster &&
    !hasHeldTurns(ctx, key) &&
    !turnInProgress(ctx, key) &&
    ctx.queue.pendingCount(key) === 0 &&
    !ctx.enqueuing.has(key) &&
    ctx.queue.hasRoom(queued.lane);
  ctx.enqueuing.add(key);
  let stored: RunRecord;
  try {
    const commit: InboundCommit = {
      session: { create: { ...newInboundSession(ctx.config, key, now), ...update }, update },
      run: queued,
      ...(mayBegin
        ? {
            begin: {
              input: inputMessage(queued),
              run: {
                ...queued,
                status: 'running',
                startedAt: now,
                attempts: 1,
                meta: { ...queued.meta, inputCommittedAt: now },
              },
              session: { status: 'running', startedAt: now, endedAt: null, updatedAt: now },
            },
          }
        : {}),
    };
    const committed = cluster
      ? await commitWithJob(ctx.store, cluster, commit)
      : await ctx.turns.commitInbound(commit);
    if (committed.status === 'duplicate') return undefined;
    stored = committed.run;
    if (committed.status === 'begun') {
      const { session, input } = committed;
      ctx.history.note(key, session.sessionId, [input]);
      ctx.queue.enqueue({ ...toQueuedRun(stored), begun: { session, runs: [stored], endSeq: input.seq } });
    } else if (!cluster && !joinHeldTurns(ctx, stored)) ctx.queue.enqueue(toQueuedRun(stored));
  } finally {
    ctx.enqueuing.delete(key);
  }
  ctx.events.emit({ type: 'run.queued', runId: stored.runId, sessionKey: key, lane: stored.lane });
  return stored;
}

/**
 * A cluster's `commitInbound`: the run and its shared-queue job commit together (one transaction:
 * the store's operation, joined, and the job's insert), so no instance sees a run without its job,
 * and a message delivered again adds no second job.
 *
 * @param store - the runtime's store
 * @param cluster - the shared queue
 * @param inbound - the message's commit, without `begin`
 * @returns what the store did
 */
async function commitWithJob(
  store: Store,
  cluster: ClusterAdapter,
  inbound: InboundCommit,
): Promise<InboundCommitResult> {
  return store.transaction(async (tx) => {
    const committed = await turnOperations(tx).commitInbound(inbound);
    if (committed.status === 'queued') await cluster.scheduleRun(committed.run, tx);
    return committed;
  });
}
