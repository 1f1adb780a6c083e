import type { DeliveryContext, SessionRecord } from '@colloquy/core';
import type { DeliveryOutcome, RunRecord } from '@colloquy/core/gateway';
import { ANNOUNCE_SKIP } from '@colloquy/core/internal';
import type { DeliveryState, PlannedDelivery } from '@colloquy/core/store';
import type { OutboxEntry } from '../delivery/delivery-outbox.js';
import type { RuntimeContext } from '../runtime/runtime-context.js';
import { errorNoticeFor } from './error-notice.js';
import type { TurnOutcome } from './turn-outcome.js';

/**
 * The chat message a turn owes its chat, decided when the turn ends and stored on its leading run
 * (`meta.pendingDelivery`) by the operation that ends it, so a runtime that dies before sending
 * sends it after the restart (or another instance does).
 */
export type PlannedReply = PlannedDelivery;

/** Results the turn read from its inbox: their fallback lines (see `announceFallback`). */
export function announceFallbacksOf(run: RunRecord): string[] {
  const value = run.meta?.announceFallbacks;
  return Array.isArray(value) ? value.filter((line): line is string => typeof line === 'string') : [];
}

/**
 * What a turn's chat gets:
 * - a reply to sub-agent results: the reply, in the requester's own voice; nothing when it is
 *   exactly `ANNOUNCE_SKIP`; the plain fallback line of each result when the turn failed (no model,
 *   an error, a timeout);
 * - otherwise the reply, or the error notice.
 *
 * @param session - the session after the turn
 * @param leader - the turn's leading run
 * @param outcome - how the turn ended
 * @returns the message to send, or `undefined` when the chat gets nothing
 */
export function planReply(
  session: SessionRecord,
  leader: RunRecord,
  outcome: TurnOutcome,
): PlannedReply | undefined {
  if (!leader.deliver || outcome.requeue) return undefined;
  const fallbacks = announceFallbacksOf(leader);
  const trigger =
    session.chatType !== undefined && session.chatType !== 'direct' ? triggerMessageId(leader) : undefined;
  const quote = trigger ? { replyToMessageId: trigger } : {};
  if (outcome.status === 'done') {
    const reply = outcome.reply?.trim();
    if (!reply || (fallbacks.length > 0 && reply === ANNOUNCE_SKIP)) return undefined;
    return { kind: 'reply', text: reply, ...quote };
  }
  if (fallbacks.length > 0) return { kind: 'announce', text: fallbacks.join('\n'), format: 'plain' };
  // The owner and the logs get the details; other chat users only an apology.
  const notice = errorNoticeFor(outcome, leader);
  return notice ? { kind: 'error-notice', text: notice, format: 'plain', ...quote } : undefined;
}

/**
 * Sends the message planned at the end of a run's turn, once, through the delivery outbox: a
 * `sending` mark is recorded (and flushed) before the channel is called, so a send cut by a crash
 * is never repeated (the chat never sees it twice), and the outcome (with the platform message id)
 * after. Used for a reply found unsent (or `queued` in the outbox) after a restart, and for the
 * error notice of a turn whose end could not be stored.
 *
 * @param ctx - the runtime internals
 * @param session - the session
 * @param run - the leading run, carrying `meta.pendingDelivery`
 * @returns when the reply is sent, failed, or stored as waiting in the outbox
 */
export function deliverPlanned(ctx: RuntimeContext, session: SessionRecord, run: RunRecord): Promise<void> {
  const plan = run.meta?.pendingDelivery as PlannedReply | undefined;
  const state = unsettledDeliveryOf(run);
  if (!plan || (state !== 'unsent' && state !== 'queued')) return Promise.resolve();
  const queued = state === 'queued' ? (run.meta?.delivery as QueuedState) : undefined;
  return enqueueReply(ctx, {
    reply: { session, runId: run.runId, plan },
    marked: false,
    since: queued?.since ?? run.endedAt ?? ctx.clock.now(),
    attempts: queued?.attempts ?? 0,
  });
}

/**
 * A planned reply whose `sending` mark is written (by `endTurn`): what {@link sendMarkedReply}
 * sends.
 */
export interface MarkedReply {
  session: SessionRecord;
  runId: string;
  plan: PlannedReply;
}

/**
 * Sends a reply whose `sending` mark is durable (`endTurn` wrote it and the store flushed), through
 * the delivery outbox: behind the chat's earlier replies, and kept and sent again while the
 * platform fails. The outcome is recorded (with the platform message id, and for sub-agent
 * fallback lines their transcript line) with the other sends of the moment.
 *
 * @param ctx - the runtime internals
 * @param reply - from `endTurn`, flushed since
 * @returns when the reply is sent, failed, or stored as waiting in the outbox (never later)
 */
export function sendMarkedReply(ctx: RuntimeContext, reply: MarkedReply): Promise<void> {
  return enqueueReply(ctx, { reply, marked: true, since: ctx.clock.now(), attempts: 0 });
}

/** A reply's `meta.delivery` while it waits in the outbox. */
type QueuedState = Extract<DeliveryState, { status: 'queued' }>;

interface ReplyInOutbox {
  reply: MarkedReply;
  /** Its `sending` mark is durable: the next try calls the channel at once. */
  marked: boolean;
  since: number;
  attempts: number;
}

/** Adds a reply to the outbox; resolves when it is settled or stored as waiting. */
function enqueueReply(ctx: RuntimeContext, waiting: ReplyInOutbox): Promise<void> {
  const { session, runId, plan } = waiting.reply;
  const to = session.deliveryContext;
  let marked = waiting.marked;
  const record = (state: DeliveryState) =>
    ctx.turns
      .recordDeliveries([{ runId, sessionKey: session.key, state }])
      .then(() => true)
      .catch((error: unknown) => {
        ctx.log.warn({ err: error, runId, status: state.status }, 'could not record where a reply stands');
        return false;
      });
  const entry: OutboxEntry = {
    target: to ? deliveryTargetKey(to) : `session:${session.key}`,
    channel: to?.channel ?? 'none',
    since: waiting.since,
    attempts: waiting.attempts,
    async attempt() {
      if (!marked) {
        marked = await markSending(ctx, waiting.reply);
        if (!marked) return { status: 'retry', error: 'the store could not mark the reply as being sent' };
      }
      const delivered = await ctx.deliver({
        session,
        kind: plan.kind,
        message: {
          text: plan.text,
          ...(plan.format ? { format: plan.format } : {}),
          ...(plan.replyToMessageId ? { replyToMessageId: plan.replyToMessageId } : {}),
        },
      });
      if (delivered.status === 'failed' && delivered.retryable) {
        return {
          status: 'retry',
          error: delivered.error,
          ...(delivered.retryAfterMs !== undefined ? { retryAfterMs: delivered.retryAfterMs } : {}),
        };
      }
      await recordOutcome(ctx, waiting.reply, delivered);
      return { status: 'settled' };
    },
    async park(lastError) {
      marked = false;
      await record({
        kind: plan.kind,
        at: ctx.clock.now(),
        status: 'queued',
        attempts: entry.attempts,
        since: entry.since,
        ...(lastError !== undefined ? { error: lastError } : {}),
      });
    },
    async giveUp(lastError) {
      const minutes = Math.round((ctx.clock.now() - entry.since) / 60_000);
      await recordOutcome(ctx, waiting.reply, {
        status: 'failed',
        error: `Not sent: the platform could not take it in ${entry.attempts} tries over ${minutes} min (runtime.deliveryRetry.maxAgeMinutes); the last error: ${lastError}`,
        code: 'CHANNEL_ERROR',
      });
    },
  };
  const { settled, handedOff } = ctx.outbox.add(entry);
  ctx.track(settled);
  return handedOff;
}

/**
 * Writes and flushes the `sending` mark of a reply about to be sent (one found unsent after a
 * restart, or waiting in the outbox; a turn's own reply is marked by `endTurn`).
 *
 * @returns whether the mark is durable (a failure is logged; the reply is not sent then)
 */
async function markSending(ctx: RuntimeContext, reply: MarkedReply): Promise<boolean> {
  try {
    await ctx.turns.recordDeliveries([
      {
        runId: reply.runId,
        sessionKey: reply.session.key,
        state: { kind: reply.plan.kind, status: 'sending', at: ctx.clock.now() },
      },
    ]);
    // The mark must be durable before the send (group commit acknowledges writes early).
    await ctx.store.flush?.();
    return true;
  } catch (error) {
    ctx.log.warn(
      { err: error, runId: reply.runId },
      'could not mark a reply as being sent; it is not sent yet',
    );
    return false;
  }
}

/**
 * Records how a reply's send ended, with the other sends of the moment (see `DeliveryRecorder`).
 * A fallback line must be in the transcript before the session's next turn reads it: an announce
 * waits for its record. With a cluster every kind waits: the turn's job must outlive the record,
 * or an instance killed between the two would leave the reply `sending` with no job to find it
 * (a restarted instance does not sweep sends, since it cannot tell another instance's from its
 * own); a job still locked by a dead instance runs again and records the cut send. Without a
 * cluster, other kinds are tracked (shutdown waits for them, and a restart finds what was cut).
 */
async function recordOutcome(
  ctx: RuntimeContext,
  reply: MarkedReply,
  delivered: DeliveryOutcome,
): Promise<void> {
  const { session, runId, plan } = reply;
  const at = ctx.clock.now();
  const sent = delivered.status === 'delivered' ? delivered : undefined;
  // Off the turn's path: the `sending` mark already keeps the reply from being sent twice. A
  // failure is logged: the reply went out, and a restart finds it `sending` and does not send it again.
  const recorded = ctx.deliveries
    .record({
      runId,
      sessionKey: session.key,
      state: { kind: plan.kind, ...delivered, at },
      ...(sent && plan.finalSeq !== undefined && plan.kind === 'reply'
        ? { platformMessage: { seq: plan.finalSeq, id: sent.messageId } }
        : {}),
      // The fallback lines answered those results in the chat: the transcript says so too, so a
      // later turn does not report them again.
      ...(sent && plan.kind === 'announce'
        ? {
            transcript: {
              role: 'assistant',
              content: plan.text,
              timestamp: at,
              runId,
              platformMessageId: sent.messageId,
              details: { announceFallback: true },
            },
          }
        : {}),
    })
    .catch((error: unknown) =>
      ctx.log.warn({ err: error, runId }, 'could not record the delivery of a reply'),
    );
  if (plan.kind === 'announce' || ctx.cluster) await recorded;
  else ctx.track(recorded);
}

/**
 * The ended runs a previous process left with a planned reply it did not finish sending: never
 * begun, waiting in the outbox (`queued`), or cut mid-send (`sending`). Read this before the
 * runtime's own turns can end (start() reads it before the queue resumes): a turn of this process
 * that ends while its reply is on the way would otherwise look unsent, and be sent twice.
 *
 * @param ctx - the runtime internals
 * @returns the runs for {@link deliverUnsent}, from the newest 500 ended ones
 */
export async function listUnsentReplies(ctx: RuntimeContext): Promise<RunRecord[]> {
  const ended = await ctx.store.listRuns({
    statuses: ['done', 'error', 'timeout', 'killed', 'interrupted'],
    limit: 500,
  });
  return ended.filter((run) => unsettledDeliveryOf(run) !== undefined);
}

/**
 * A run's planned reply that is not settled: never begun (`unsent`), waiting in the outbox for a
 * retry (`queued`), or cut mid-send (`cut`).
 */
function unsettledDeliveryOf(run: RunRecord): 'unsent' | 'queued' | 'cut' | undefined {
  if (run.meta?.pendingDelivery === undefined) return undefined;
  const delivery = run.meta.delivery as { status?: string } | undefined;
  if (delivery === undefined) return 'unsent';
  if (delivery.status === 'queued') return 'queued';
  return delivery.status === 'sending' ? 'cut' : undefined;
}

/**
 * After a restart: sends what ended turns planned but never began to send, or left waiting in the
 * outbox (oldest first, so each chat gets them in order), and records the sends a crash cut as
 * `failed` (not repeated).
 *
 * @param ctx - the runtime internals
 * @param runs - ended runs that no turn of this process is delivering (see {@link listUnsentReplies})
 * @returns when every reply is in the outbox (ahead of any a later turn adds to the same chat)
 */
export async function deliverUnsent(ctx: RuntimeContext, runs: readonly RunRecord[]): Promise<void> {
  for (const run of [...runs].sort(byDeliveryOrder)) {
    const state = unsettledDeliveryOf(run);
    if (state === 'cut') {
      const cut = run.meta?.delivery as { kind?: PlannedReply['kind']; at?: number };
      await ctx.turns
        .recordDeliveries([
          {
            runId: run.runId,
            sessionKey: run.sessionKey,
            state: {
              kind: cut.kind ?? 'reply',
              at: cut.at ?? ctx.clock.now(),
              status: 'failed',
              error:
                'the runtime stopped while sending this reply; it is not sent again, so it cannot appear twice',
            },
          },
        ])
        .catch((error: unknown) =>
          ctx.log.warn({ err: error, runId: run.runId }, 'could not settle a cut send'),
        );
    } else if (state !== undefined) {
      const session = await ctx.store.getSession(run.sessionKey);
      // Tracked by the outbox: sent in the background, in order per chat.
      if (session) void deliverPlanned(ctx, session, run);
    }
  }
}

/** Replies in the order their turns ended: the order each chat must get them in. */
function byDeliveryOrder(a: RunRecord, b: RunRecord): number {
  return (a.endedAt ?? a.updatedAt) - (b.endedAt ?? b.updatedAt) || a.createdAt - b.createdAt;
}

/**
 * The outbox lane of a delivery target: one chat (or thread) of one bot account.
 *
 * @param to - where a message goes
 */
export function deliveryTargetKey(to: DeliveryContext): string {
  return JSON.stringify([to.channel, to.accountId, to.to, to.threadId ?? null]);
}

/** The platform id of the inbound message that started a run, when a channel message did. */
function triggerMessageId(run: RunRecord): string | undefined {
  const input = run.meta?.input;
  if (typeof input !== 'object' || input === null) return undefined;
  const id = (input as { platformMessageId?: unknown }).platformMessageId;
  return typeof id === 'string' && id !== '' ? id : undefined;
}
