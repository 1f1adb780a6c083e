import type { MediaAttachment, SessionRecord, StoredMessage, TranscriptMessage } from '@colloquy/core';
import type { RunRecord, SessionStatus } from '@colloquy/core/gateway';
import { classifySessionKey } from '@colloquy/core/internal';
import { type TurnEnd, turnOperations } from '@colloquy/core/store';
import type { GroupContextEntry } from '../inbound/group-context.js';
import type { RuntimeContext } from '../runtime/runtime-context.js';
import type { AfterCommit } from '../runtime/turn-end-hook-types.js';
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

/** A turn that began: the session as updated and its runs, now `running`. */
export interface BegunTurn {
  /** `undefined` when the session was deleted while its runs waited. */
  session: SessionRecord | undefined;
  runs: RunRecord[];
  /** The session was yielded and this turn woke it. */
  woke?: boolean;
  /** The seq of the transcript's newest message as the turn began, when known (its history is then not re-read). */
  endSeq?: number;
}

/**
 * A queued run's meta as its turn begins: when its input was stored, whether it was folded into the
 * leader, and the leader's announce fallbacks. `run.meta` itself when the begin adds none of these.
 */
function metaAtBegin(
  run: RunRecord,
  leader: string,
  fallbacks: readonly string[],
  now: number,
): Record<string, unknown> | undefined {
  const folded = run.runId !== leader;
  const withFallbacks = !folded && fallbacks.length > 0;
  if (run.meta?.inputCommittedAt !== undefined && !folded && !withFallbacks) return run.meta;
  return {
    ...run.meta,
    inputCommittedAt: run.meta?.inputCommittedAt ?? now,
    ...(folded ? { foldedInto: leader } : {}),
    ...(withFallbacks ? { announceFallbacks: fallbacks } : {}),
  };
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
  let appended: StoredMessage[] = [];
  const begun = ctx.store.transaction(async (tx) => {
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
    if (messages.length > 0) appended = await tx.appendMessages(sessionKey, messages);
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
      const meta = metaAtBegin(run, leader, fallbacks, now);
      const updated = await tx.updateRun(run.runId, {
        status: 'running',
        startedAt: now,
        updatedAt: now,
        attempts: run.attempts + 1,
        // Unchanged (a queued message, its input stored): not written again.
        ...(meta === run.meta ? {} : { meta }),
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
  // Committed: the history cache takes what the turn appended, so its prompt reads no tail.
  return begun.then((turn) => {
    const last = appended.at(-1);
    if (!turn?.session || !last) return turn;
    ctx.history.note(sessionKey, turn.session.sessionId, appended);
    return { ...turn, endSeq: last.seq };
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
  /**
   * The chat message the turn owes, marked `sending` in the end's own write: durable once the store
   * has flushed, then sent with `sendMarkedReply`.
   */
  reply?: MarkedReply;
  /** The session's inbox holds entries its next turn reads (a failed end counts as true). */
  inboxWaiting: boolean;
}

const SESSION_STATUS: Record<TurnOutcome['status'], SessionStatus> = {
  done: 'done',
  error: 'error',
  timeout: 'timeout',
  killed: 'killed',
};

/**
 * Ends a turn durably, with ONE store operation (`endTurn`): the final assistant message is
 * appended, then the runs take their final status (so a run is `done` only once its final message
 * is committed; the leader carries the chat message the turn owes, `plan`, marked `sending`), and
 * the session's status, usage and cost are updated. With `outcome.requeue` the runs go back to
 * `queued` and the session to `idle` instead. When the turn-end hooks have work (a sub-agent's
 * announce, a hook added with `onTurnEnd`), the end and the hooks share one transaction.
 *
 * @param ctx - the runtime internals
 * @param sessionKey - the session
 * @param runs - the turn's runs, leader first
 * @param outcome - how it ended
 * @param plan - the chat message the turn owes (see `planReply`)
 * @param session - the session as the turn began (its kind picks the hooks; nothing is read back)
 * @returns the stored state after the end
 */
export async function endTurn(
  ctx: RuntimeContext,
  sessionKey: string,
  runs: readonly RunRecord[],
  outcome: TurnOutcome,
  plan: PlannedReply | undefined,
  session: SessionRecord | undefined,
): Promise<EndedTurn> {
  const end = turnEndOf(ctx.clock.now(), sessionKey, runs, outcome, plan);
  let afterCommit: AfterCommit | undefined;
  const ended = needsTurnEndHooks(ctx, sessionKey, session)
    ? await ctx.store.transaction(async (tx) => {
        const result = await turnOperations(tx).endTurn(end);
        afterCommit = await runTurnEndHooks(ctx, result.runs, result.session, tx);
        return result;
      })
    : await ctx.turns.endTurn(end);
  afterCommit?.();
  if (ended.session && ended.finalMessage) {
    ctx.history.note(sessionKey, ended.session.sessionId, [ended.finalMessage]);
  }
  // The session is at rest unless more runs wait: watchers of it get their notice now.
  if (!outcome.requeue && ended.watched) fireDueWatchesLater(ctx, sessionKey);
  const leader = ended.runs[0];
  return {
    session: ended.session,
    runs: ended.runs,
    inboxWaiting: ended.inboxWaiting,
    ...(ended.marked && ended.session && leader
      ? { reply: { session: ended.session, runId: leader.runId, plan: ended.marked } }
      : {}),
  };
}

/** The store's view of a turn's end: what `endTurn` writes. */
function turnEndOf(
  now: number,
  sessionKey: string,
  runs: readonly RunRecord[],
  outcome: TurnOutcome,
  plan: PlannedReply | undefined,
): TurnEnd {
  const leader = runs[0]?.runId;
  const finalMessage = outcome.finalMessage ? { finalMessage: outcome.finalMessage } : {};
  if (outcome.requeue) {
    return {
      sessionKey,
      ...finalMessage,
      runs: runs.map((run) => ({
        runId: run.runId,
        patch: { status: 'queued', updatedAt: now, meta: { ...run.meta, requeuedAt: now } },
      })),
      session: { status: 'idle', updatedAt: now },
    };
  }
  return {
    sessionKey,
    ...finalMessage,
    runs: runs.map((run) => ({
      runId: run.runId,
      patch: {
        status: outcome.status,
        endedAt: now,
        updatedAt: now,
        ...(outcome.reply !== undefined ? { reply: outcome.reply } : {}),
        ...(outcome.error !== undefined ? { error: outcome.error } : {}),
        ...(run.runId === leader && outcome.usage ? { usage: outcome.usage } : {}),
        ...(run.runId === leader && outcome.costUsd !== undefined ? { costUsd: outcome.costUsd } : {}),
        // The planned reply joins the meta the turn holds (nothing is read back for it).
        ...(run.runId === leader && plan ? { meta: run.meta ?? {} } : {}),
      },
    })),
    session: {
      status: SESSION_STATUS[outcome.status],
      endedAt: now,
      updatedAt: now,
      abortedLastRun: outcome.status === 'killed' || outcome.status === 'timeout',
      ...(outcome.status === 'done' ? { systemSent: true } : {}),
    },
    ...(outcome.usage || outcome.costUsd !== undefined
      ? {
          add: {
            ...(outcome.usage ? { usage: outcome.usage } : {}),
            ...(outcome.costUsd !== undefined ? { costUsd: outcome.costUsd } : {}),
          },
        }
      : {}),
    ...(plan && leader ? { delivery: { runId: leader, plan, at: now } } : {}),
  };
}

/**
 * True when a turn's end must run the turn-end hooks in its transaction: a hook added with
 * `onTurnEnd`, or a sub-agent session, whose ended runs are announced to the session that spawned it.
 */
function needsTurnEndHooks(
  ctx: RuntimeContext,
  sessionKey: string,
  session: SessionRecord | undefined,
): boolean {
  if (ctx.turnEndHooks.some((hook) => hook !== ctx.subagents.turnEndHook)) return true;
  const kind = session?.kind ?? classifySessionKey(sessionKey, { mainKey: ctx.config.session.mainKey });
  return kind === 'subagent';
}
