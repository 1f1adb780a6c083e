import type { MediaAttachment, SessionRecord, StoredMessage, TranscriptMessage } from '@colloquy/core';
import type { RunRecord, SessionStatus } from '@colloquy/core/gateway';
import type { GroupContextEntry } from '../inbound/group-context.js';
import type { RuntimeContext } from '../runtime/runtime-context.js';
import { runTurnEndHooks } from '../runtime/turn-end-hooks.js';
import { fireDueWatchesLater } from '../runtime/watch-notices.js';
import {
  YIELD_META_KEY,
  YIELD_TIMEOUT_PREFIX,
  yieldStateOf,
  yieldWakeNotice,
} from '../runtime/yield-wake.js';
import { announceFallbacksOf, type MarkedReply, type PlannedReply } from './reply-delivery.js';
import type { TurnOutcome } from './turn-outcome.js';
import { addUsage } from './usage.js';

/** A turn that began: the session as updated and its runs, now `running`. */
export interface BegunTurn {
  /** `undefined` when the session was deleted while its runs waited. */
  session: SessionRecord | undefined;
  runs: RunRecord[];
  /** The session was yielded and this turn woke it. */
  woke?: boolean;
}

/**
 * Starts a turn durably, in ONE store transaction and before any model call:
 * the session's unread inbox entries and each run's input message are appended to the transcript
 * (the inbox entries are marked consumed), the runs become `running` with `attempts + 1`, and the
 * session row becomes `running`. A run resumed after a shutdown keeps its already-stored input.
 *
 * @param ctx - the runtime internals
 * @param sessionKey - the session
 * @param runIds - the runs of the turn (leader first); runs no longer `queued` are skipped
 * @returns the begun turn, or `undefined` when none of the runs is still queued
 */
export function beginTurn(
  ctx: RuntimeContext,
  sessionKey: string,
  runIds: readonly string[],
): Promise<BegunTurn | undefined> {
  return ctx.store.transaction(async (tx) => {
    const queued: RunRecord[] = [];
    for (const id of runIds) {
      const run = await tx.getRun(id);
      if (run?.status === 'queued') queued.push(run);
    }
    if (queued.length === 0) return undefined;
    const session = await tx.getSession(sessionKey);
    if (!session) return { session: undefined, runs: queued };
    const now = ctx.clock.now();
    const inbox = await tx.listInbox(sessionKey);
    const inputs: TranscriptMessage[] = [];
    for (const run of queued) {
      if (run.meta?.inputCommittedAt === undefined && run.message !== '') inputs.push(inputMessage(run));
    }
    // A yielded session learns why it woke first; timeout entries only wake, they are not transcribed.
    const yielded = yieldStateOf(session);
    const messages: TranscriptMessage[] = [
      ...(yielded ? [yieldWakeNotice(yielded, inbox, inputs.length > 0, now)] : []),
      ...inbox.filter((entry) => !entry.id.startsWith(YIELD_TIMEOUT_PREFIX)).map((entry) => entry.message),
      ...inputs,
    ];
    if (messages.length > 0) await tx.appendMessages(sessionKey, messages);
    if (inbox.length > 0) {
      await tx.consumeInbox(
        sessionKey,
        inbox.map((entry) => entry.id),
        now,
      );
    }
    const leader = queued[0]!.runId;
    // Sub-agent results read by this turn: their fallback lines, in case it cannot answer them.
    const fallbacks = [
      ...announceFallbacksOf(queued[0]!),
      ...inbox.flatMap((entry) => fallbackOf(entry.message)),
    ];
    const runs: RunRecord[] = [];
    for (const run of queued) {
      const updated = await tx.updateRun(run.runId, {
        status: 'running',
        startedAt: now,
        updatedAt: now,
        attempts: run.attempts + 1,
        meta: {
          ...run.meta,
          inputCommittedAt: run.meta?.inputCommittedAt ?? now,
          ...(run.runId === leader ? {} : { foldedInto: leader }),
          ...(run.runId === leader && fallbacks.length > 0 ? { announceFallbacks: fallbacks } : {}),
        },
      });
      runs.push(updated);
    }
    const { [YIELD_META_KEY]: _ended, ...meta } = session.meta ?? {};
    const updated = await tx.patchSession(sessionKey, {
      status: 'running',
      startedAt: now,
      endedAt: null,
      updatedAt: now,
      ...(yielded ? { meta } : {}),
    });
    return { session: updated, runs, ...(yielded ? { woke: true } : {}) };
  });
}

/** The fallback line of a sub-agent announce in the inbox (see `announceFallback`), if it is one. */
function fallbackOf(message: TranscriptMessage): string[] {
  if (message.provenance?.kind !== 'announce') return [];
  const line = (message.details as { announce?: { fallback?: unknown } } | undefined)?.announce?.fallback;
  return typeof line === 'string' ? [line] : [];
}

/** The input of a run as the user message it becomes. Inbound details travel in `run.meta.input`. */
export function inputMessage(run: RunRecord): TranscriptMessage {
  const message: TranscriptMessage = {
    role: 'user',
    content: run.message,
    timestamp: run.createdAt,
    runId: run.runId,
  };
  if (run.provenance) message.provenance = run.provenance;
  const input = run.meta?.input;
  if (typeof input === 'object' && input !== null) {
    const { sender, media, platformMessageId, groupContext } = input as {
      sender?: { id: string; name?: string };
      media?: MediaAttachment[];
      platformMessageId?: string;
      groupContext?: GroupContextEntry[];
    };
    if (sender) message.sender = sender;
    if (groupContext && groupContext.length > 0) message.details = { groupContext };
    if (media && media.length > 0) message.media = media;
    if (platformMessageId) message.platformMessageId = platformMessageId;
  }
  return message;
}

/** A turn after its end was committed. */
export interface EndedTurn {
  session: SessionRecord | undefined;
  runs: RunRecord[];
  /** The transcript seq of the final assistant message, when one was stored. */
  finalSeq?: number;
  /**
   * The chat message the turn owes, marked `sending` in the end's own write: durable once the store
   * has flushed, then sent with `sendMarkedReply`.
   */
  reply?: MarkedReply;
}

const SESSION_STATUS: Record<TurnOutcome['status'], SessionStatus> = {
  done: 'done',
  error: 'error',
  timeout: 'timeout',
  killed: 'killed',
};

/**
 * Ends a turn durably, in ONE transaction: the final assistant message is appended, then the runs
 * take their final status (so a run is `done` only once its final message is committed; the
 * leader carries the chat message the turn owes, `plan`, as `meta.pendingDelivery`), the
 * session's status, usage and cost are updated, and the turn-end hooks run. With
 * `outcome.requeue` the runs go back to `queued` and the session to `idle` instead.
 *
 * @param ctx - the runtime internals
 * @param sessionKey - the session
 * @param runs - the turn's runs, leader first
 * @param outcome - how it ended
 * @param plan - the chat message the turn owes (see `planReply`)
 * @returns the stored state after the end
 */
export async function endTurn(
  ctx: RuntimeContext,
  sessionKey: string,
  runs: readonly RunRecord[],
  outcome: TurnOutcome,
  plan?: PlannedReply,
): Promise<EndedTurn> {
  const ended = await ctx.store.transaction(async (tx) => {
    const now = ctx.clock.now();
    const session = await tx.getSession(sessionKey);
    let finalSeq: number | undefined;
    if (session && outcome.finalMessage) {
      const [stored]: StoredMessage[] = await tx.appendMessages(sessionKey, [outcome.finalMessage]);
      finalSeq = stored?.seq;
    }
    const leader = runs[0]?.runId;
    const updatedRuns: RunRecord[] = [];
    let marked: Omit<MarkedReply, 'session'> | undefined;
    for (const run of runs) {
      if (outcome.requeue) {
        updatedRuns.push(
          await tx.updateRun(run.runId, {
            status: 'queued',
            updatedAt: now,
            meta: { ...run.meta, requeuedAt: now },
          }),
        );
        continue;
      }
      const pending =
        run.runId === leader && plan
          ? { ...plan, ...(finalSeq !== undefined ? { finalSeq } : {}) }
          : undefined;
      let meta: Record<string, unknown> | undefined;
      if (pending) {
        meta = { ...run.meta, pendingDelivery: pending };
        // The reply is marked `sending` in the same write, so the end and the mark commit together; a
        // session gone meanwhile gets no reply, and a run already settled keeps its delivery.
        if (session && run.meta?.delivery === undefined) {
          marked = { runId: run.runId, plan: pending, meta };
          meta = { ...meta, delivery: { kind: pending.kind, status: 'sending', at: now } };
        }
      }
      const finished = await tx.updateRun(run.runId, {
        status: outcome.status,
        endedAt: now,
        updatedAt: now,
        ...(meta ? { meta } : {}),
        ...(outcome.reply !== undefined ? { reply: outcome.reply } : {}),
        ...(outcome.error !== undefined ? { error: outcome.error } : {}),
        ...(run.runId === leader && outcome.usage ? { usage: outcome.usage } : {}),
        ...(run.runId === leader && outcome.costUsd !== undefined ? { costUsd: outcome.costUsd } : {}),
      });
      updatedRuns.push(finished);
    }
    let updatedSession: SessionRecord | undefined;
    if (session) {
      if (outcome.requeue) {
        updatedSession = await tx.patchSession(sessionKey, { status: 'idle', updatedAt: now });
      } else {
        const cost =
          outcome.costUsd === undefined ? undefined : (session.estimatedCostUsd ?? 0) + outcome.costUsd;
        updatedSession = await tx.patchSession(sessionKey, {
          status: SESSION_STATUS[outcome.status],
          endedAt: now,
          updatedAt: now,
          abortedLastRun: outcome.status === 'killed' || outcome.status === 'timeout',
          ...(outcome.usage ? { usage: addUsage(session.usage, outcome.usage) } : {}),
          ...(cost !== undefined ? { estimatedCostUsd: cost } : {}),
          ...(outcome.status === 'done' ? { systemSent: true } : {}),
        });
      }
    }
    const afterCommit = await runTurnEndHooks(ctx, updatedRuns, updatedSession, tx);
    const turn: EndedTurn = {
      session: updatedSession,
      runs: updatedRuns,
      ...(finalSeq !== undefined ? { finalSeq } : {}),
      ...(marked && updatedSession ? { reply: { session: updatedSession, ...marked } } : {}),
    };
    return { turn, afterCommit };
  });
  ended.afterCommit();
  // The session is at rest unless more runs wait: watchers of it get their notice now.
  if (!outcome.requeue) fireDueWatchesLater(ctx, sessionKey);
  return ended.turn;
}
