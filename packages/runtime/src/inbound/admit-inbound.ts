import type { InboundMessage, SessionRecord } from '@colloquy/core';
import { newRunRecord } from '../agent/enqueue-run.js';
import { hasHeldTurns } from '../agent/provider-outage.js';
import type { RuntimeContext } from '../runtime/runtime-context.js';
import type { InboundRun } from './queue-inbound-run.js';
import { sessionAfterInbound } from './session-for-inbound.js';

/** What a chat reads when it has as many messages waiting as `runtime.maxQueuedPerSession`. */
export const BUSY_NOTICE =
  'I am busy with the earlier messages of this chat, so I did not take that one; try again in a minute.';

/** Per runtime: the sessions told they are busy, until one of their messages is admitted again. */
const busyByRuntime = new WeakMap<RuntimeContext, Set<string>>();

/** What {@link admitInbound} decided. */
export type Admission = { admitted: true } | { admitted: false; tell: boolean };

const ADMITTED: Admission = { admitted: true };

/**
 * The admission check of a chat message: a session with `runtime.maxQueuedPerSession` runs queued or
 * running (waiting for a model that is slow or down, say) takes no more turns, so its queue cannot
 * grow without bound. The store is read only when the session may be full (see
 * {@link mayBeFull}): a plain turn costs no store operation. The count is read before the
 * enqueue, so concurrent messages of one session may pass it together: the limit is a bound, not
 * an exact figure.
 *
 * @param ctx - the runtime internals
 * @param sessionKey - the message's session
 * @returns admitted, or refused with `tell` true for the first refusal since the session was last admitted
 */
export async function admitInbound(ctx: RuntimeContext, sessionKey: string): Promise<Admission> {
  const limit = ctx.config.runtime.maxQueuedPerSession;
  let busy = busyByRuntime.get(ctx);
  if (!busy) {
    busy = new Set();
    busyByRuntime.set(ctx, busy);
  }
  if (!mayBeFull(ctx, sessionKey, limit, busy)) return ADMITTED;
  const waiting = await ctx.store.listRuns({ sessionKey, statuses: ['queued', 'running'], limit });
  if (waiting.length < limit) {
    busy.delete(sessionKey);
    return ADMITTED;
  }
  const tell = !busy.has(sessionKey);
  busy.add(sessionKey);
  return { admitted: false, tell };
}

/**
 * Whether the session may have `limit` runs waiting, so that the store must be asked: always with
 * a cluster (the shared queue is not this process's), when this process's queue holds nearly
 * `limit` of its runs, when an outage holds its turns out of the queue (stored `queued`), or when
 * it was told it is busy (and is admitted again only once the store says it has room).
 */
function mayBeFull(ctx: RuntimeContext, sessionKey: string, limit: number, busy: Set<string>): boolean {
  if (ctx.cluster || busy.has(sessionKey) || hasHeldTurns(ctx, sessionKey)) return true;
  const here = ctx.queue.pendingCount(sessionKey) + (ctx.queue.runningBatch(sessionKey)?.length ?? 0);
  return here + 1 >= limit;
}

/**
 * Stores a chat message {@link admitInbound} refused, without queuing a turn: as its run, under the
 * message's own run id, ended `error` at once (so the message is kept, and a redelivery of it is
 * recognised), in one transaction with the session write the message makes.
 *
 * @param ctx - the runtime internals
 * @param inbound - the message
 * @param run - its run id, session, lane and meta, as for a run that is queued
 * @param now - epoch ms
 * @returns the session as written
 * @throws `CONFLICT` when the message was stored before
 */
export function storeRefusedInbound(
  ctx: RuntimeContext,
  inbound: InboundMessage,
  run: InboundRun,
  now: number,
): Promise<SessionRecord> {
  const limit = ctx.config.runtime.maxQueuedPerSession;
  return ctx.store.transaction(async (tx) => {
    const current = await tx.getSession(run.sessionKey);
    const session = sessionAfterInbound(ctx.config, current, run.sessionKey, inbound, now);
    await tx.putSession(session);
    await tx.createRun({
      ...newRunRecord({ ...run, message: inbound.text, deliver: true }, now),
      status: 'error',
      endedAt: now,
      error: `Not queued: the session had runtime.maxQueuedPerSession (${limit}) messages waiting.`,
    });
    return session;
  });
}
