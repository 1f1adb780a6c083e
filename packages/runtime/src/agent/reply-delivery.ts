import type { SessionRecord } from '@colloquy/core';
import type { RunRecord } from '@colloquy/core/gateway';
import { ANNOUNCE_SKIP } from '@colloquy/core/internal';
import type { PlannedDelivery } from '@colloquy/core/store';
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
 * Sends the message planned at the end of a run's turn, once: a `sending` mark is recorded (and
 * flushed) before the channel is called, so a send cut by a crash is never repeated (the chat never
 * sees it twice), and the outcome (with the platform message id) after.
 *
 * @param ctx - the runtime internals
 * @param session - the session
 * @param run - the leading run, carrying `meta.pendingDelivery`
 */
export async function deliverPlanned(
  ctx: RuntimeContext,
  session: SessionRecord,
  run: RunRecord,
): Promise<void> {
  const marked = await markReplySending(ctx, session, run);
  if (!marked) return;
  try {
    // The mark must be durable before the send (group commit acknowledges writes early).
    await ctx.store.flush?.();
  } catch (error) {
    ctx.log.warn({ err: error, runId: run.runId }, 'could not mark a reply as being sent; it is not sent');
    return;
  }
  await sendMarkedReply(ctx, marked);
}

/**
 * A planned reply whose `sending` mark is written (by `endTurn`, or by `deliverPlanned` after a
 * restart): what {@link sendMarkedReply} sends.
 */
export interface MarkedReply {
  session: SessionRecord;
  runId: string;
  plan: PlannedReply;
}

/**
 * Writes the `sending` mark of the reply a run's turn planned, when it has one not yet begun (a
 * reply found unsent after a restart; a turn's own reply is marked by `endTurn`). The mark is
 * durable only once the store has flushed it (group commit): the caller flushes before
 * {@link sendMarkedReply}.
 *
 * @param ctx - the runtime internals
 * @param session - the session
 * @param run - the leading run, carrying `meta.pendingDelivery`
 * @returns the reply to send, or `undefined` when there is none or the mark could not be written
 *   (logged; the reply is then not sent)
 */
async function markReplySending(
  ctx: RuntimeContext,
  session: SessionRecord,
  run: RunRecord,
): Promise<MarkedReply | undefined> {
  const plan = run.meta?.pendingDelivery as PlannedReply | undefined;
  if (!plan || run.meta?.delivery !== undefined) return undefined;
  try {
    await ctx.turns.recordDeliveries([
      {
        runId: run.runId,
        sessionKey: session.key,
        state: { kind: plan.kind, status: 'sending', at: ctx.clock.now() },
      },
    ]);
  } catch (error) {
    ctx.log.warn({ err: error, runId: run.runId }, 'could not mark a reply as being sent; it is not sent');
    return undefined;
  }
  return { session, runId: run.runId, plan };
}

/**
 * Sends a reply whose `sending` mark is durable, and records the outcome (with the platform message
 * id, and for sub-agent fallback lines their transcript line) with the other sends of the moment.
 *
 * @param ctx - the runtime internals
 * @param reply - from {@link markReplySending} or `endTurn`, flushed since
 */
export async function sendMarkedReply(ctx: RuntimeContext, reply: MarkedReply): Promise<void> {
  const { session, runId, plan } = reply;
  const delivered = await ctx.deliver({
    session,
    kind: plan.kind,
    message: {
      text: plan.text,
      ...(plan.format ? { format: plan.format } : {}),
      ...(plan.replyToMessageId ? { replyToMessageId: plan.replyToMessageId } : {}),
    },
  });
  const at = ctx.clock.now();
  const sent = delivered.status === 'delivered' ? delivered : undefined;
  // Recorded with the other sends of the moment, off the turn's path: the `sending` mark already
  // keeps the reply from being sent twice, and shutdown waits for the record (tracked). A failure
  // is logged: the reply went out, and a restart finds it `sending` and does not send it again.
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
  // A fallback line must be in the transcript before the session's next turn reads it.
  if (plan.kind === 'announce') await recorded;
  else ctx.track(recorded);
}

/**
 * The ended runs a previous process left with a planned reply it did not finish sending: never
 * begun, or cut mid-send (`sending`). Read this before the runtime's own turns can end (start()
 * reads it before the queue resumes): a turn of this process that ends while its reply is on the
 * way would otherwise look unsent, and be sent twice.
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

/** A run's planned reply that is not settled: never begun (`unsent`), or cut mid-send (`cut`). */
function unsettledDeliveryOf(run: RunRecord): 'unsent' | 'cut' | undefined {
  if (run.meta?.pendingDelivery === undefined) return undefined;
  const delivery = run.meta.delivery as { status?: string } | undefined;
  if (delivery === undefined) return 'unsent';
  return delivery.status === 'sending' ? 'cut' : undefined;
}

/**
 * After a crash: sends what ended turns planned but never began to send, and records the sends a
 * crash cut as `failed` (not repeated).
 *
 * @param ctx - the runtime internals
 * @param runs - ended runs that no turn of this process is delivering (see {@link listUnsentReplies})
 */
export async function deliverUnsent(ctx: RuntimeContext, runs: readonly RunRecord[]): Promise<void> {
  for (const run of runs) {
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
    } else if (state === 'unsent') {
      const session = await ctx.store.getSession(run.sessionKey);
      if (session) await deliverPlanned(ctx, session, run);
    }
  }
}

/** The platform id of the inbound message that started a run, when a channel message did. */
function triggerMessageId(run: RunRecord): string | undefined {
  const input = run.meta?.input;
  if (typeof input !== 'object' || input === null) return undefined;
  const id = (input as { platformMessageId?: unknown }).platformMessageId;
  return typeof id === 'string' && id !== '' ? id : undefined;
}
