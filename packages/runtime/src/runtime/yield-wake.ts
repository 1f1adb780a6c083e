import { randomUUID } from 'node:crypto';
import { ColloquyError, type SessionRecord, type TranscriptMessage } from '@colloquy/core';
import type { GatewayResult, SessionYieldState } from '@colloquy/core/gateway';
import { SESSIONS_YIELD_MAX_REASON_CHARS, SESSIONS_YIELD_MAX_TIMEOUT_SECONDS } from '@colloquy/core/internal';
import type { InboxEntry } from '@colloquy/core/store';
import { readParams } from '../gateway/params.js';
import { requireSession } from '../gateway/resolve-session.js';
import type { RuntimeContext } from './runtime-context.js';
import { WATCH_INBOX_PREFIX } from './watch-notices.js';
import type { YieldTimers } from './yield-timers.js';

/** Where a yielded session keeps its {@link SessionYieldState} (`session.meta.yield`). */
export const YIELD_META_KEY = 'yield';
/** Inbox ids of timeout wakes: `yield-timeout:<yield id>`. They wake the session and are not transcribed. */
export const YIELD_TIMEOUT_PREFIX = 'yield-timeout:';

/** The yield state of a session, if it is yielded. */
export function yieldStateOf(session: SessionRecord | undefined): SessionYieldState | undefined {
  const value = session?.meta?.[YIELD_META_KEY];
  if (typeof value !== 'object' || value === null) return undefined;
  const state = value as SessionYieldState;
  return typeof state.id === 'string' && typeof state.at === 'number' ? state : undefined;
}

/**
 * Creates the yield timers. A timer that fires puts a timeout entry in the session's inbox (only
 * while that very yield is still stored) and wakes it; the deadline lives on the session, so a
 * restart re-arms it ({@link YieldTimers.restore}) and a session never sleeps past it for good.
 */
export function createYieldTimers(ctx: RuntimeContext): YieldTimers {
  const timers = new Map<string, NodeJS.Timeout>();
  let stopped = false;

  function disarm(sessionKey: string): void {
    const timer = timers.get(sessionKey);
    if (timer) clearTimeout(timer);
    timers.delete(sessionKey);
  }

  function arm(sessionKey: string, state: SessionYieldState): void {
    disarm(sessionKey);
    if (stopped || state.deadline === undefined) return;
    const delay = Math.max(0, state.deadline - ctx.clock.now());
    const timer = setTimeout(() => {
      timers.delete(sessionKey);
      ctx.track(fire(sessionKey, state));
    }, delay);
    timer.unref?.();
    timers.set(sessionKey, timer);
  }

  async function fire(sessionKey: string, state: SessionYieldState): Promise<void> {
    if (stopped || !ctx.accepting) return;
    const now = ctx.clock.now();
    const put = await ctx.store.transaction(async (tx) => {
      const session = await tx.getSession(sessionKey);
      if (yieldStateOf(session)?.id !== state.id) return false;
      const entry: InboxEntry = {
        sessionKey,
        id: `${YIELD_TIMEOUT_PREFIX}${state.id}`,
        message: {
          role: 'user',
          content: `The timeout of ${state.timeoutSeconds ?? 0} s passed.`,
          timestamp: now,
          provenance: { kind: 'system', sourceTool: 'sessions_yield' },
        },
        createdAt: now,
      };
      return tx.putInbox(entry);
    });
    if (put) await ctx.wake(sessionKey);
  }

  async function restore(): Promise<void> {
    const page = 500;
    for (let offset = 0; ; offset += page) {
      const sessions = await ctx.store.listSessions({ includeArchived: true, limit: page, offset });
      for (const session of sessions) {
        const state = yieldStateOf(session);
        if (state?.deadline !== undefined) arm(session.key, state);
      }
      if (sessions.length < page) return;
    }
  }

  return {
    arm,
    disarm,
    restore,
    stop() {
      stopped = true;
      for (const key of [...timers.keys()]) disarm(key);
    },
  };
}

/**
 * `session.yield`: records that the session waits (reason, timeout) on `session.meta.yield` and
 * arms the timeout. Refused when nothing is pending: no child run queued or running, no child
 * result on its way, no unread inbox entry.
 *
 * @throws `SESSION_NOT_FOUND`; `INVALID_ARGUMENT`; `CONFLICT` when nothing is pending
 */
export async function sessionYield(
  ctx: RuntimeContext,
  params: unknown,
): Promise<GatewayResult<'session.yield'>> {
  const p = readParams('session.yield', params);
  p.only(['key', 'reason', 'timeoutSeconds']);
  const key = (await requireSession(ctx.store, ctx.config, p.string('key'))).key;
  const reason = p.optionalString('reason');
  if (reason !== undefined && reason.length > SESSIONS_YIELD_MAX_REASON_CHARS) {
    throw new ColloquyError(
      'INVALID_ARGUMENT',
      `session.yield: reason is longer than ${SESSIONS_YIELD_MAX_REASON_CHARS} characters; shorten it.`,
      { field: 'reason' },
    );
  }
  const seconds = p.optionalNumber('timeoutSeconds', 1, SESSIONS_YIELD_MAX_TIMEOUT_SECONDS);
  const timeoutSeconds = seconds === undefined ? undefined : Math.floor(seconds);
  const result = await ctx.store.transaction(async (tx) => {
    const children = (await tx.listRuns({ spawnedBy: key, statuses: ['queued', 'running'] })).length;
    const results = (await tx.listOutbox({ statuses: ['pending'], requesterSessionKey: key })).filter(
      (row) => row.inboxAt === undefined,
    ).length;
    const inbox = (await tx.listInbox(key)).length;
    const watches = (await tx.listWatches({ watcherKey: key })).length;
    if (children + results + inbox + watches === 0) {
      throw new ColloquyError(
        'CONFLICT',
        'Nothing is pending, so there is nothing to wake you: you have no running sub-agent, no watched session and no unread message. Answer now, or spawn a sub-agent first (sessions_spawn).',
        { key },
      );
    }
    const now = ctx.clock.now();
    const state: SessionYieldState = {
      id: randomUUID(),
      at: now,
      ...(reason ? { reason } : {}),
      ...(timeoutSeconds !== undefined ? { timeoutSeconds, deadline: now + timeoutSeconds * 1000 } : {}),
    };
    const session = (await tx.getSession(key))!;
    await tx.patchSession(key, { meta: { ...session.meta, [YIELD_META_KEY]: state } });
    return { sessionKey: key, yielded: state, pending: { children, results, inbox, watches } };
  });
  ctx.yields.arm(key, result.yielded);
  return result;
}

/**
 * The notice that opens the first turn after a yield: why the session woke. Built from what the
 * turn reads: sub-agent results, the timeout, any other message.
 *
 * @param state - the yield that ends
 * @param inbox - the inbox entries the turn consumes
 * @param hasInput - whether the turn also carries a new message
 * @param now - the clock
 * @returns the notice to transcribe before what arrived
 */
export function yieldWakeNotice(
  state: SessionYieldState,
  inbox: readonly InboxEntry[],
  hasInput: boolean,
  now: number,
): TranscriptMessage {
  const reasons: string[] = [];
  let message = hasInput;
  for (const entry of inbox) {
    if (entry.id.startsWith(YIELD_TIMEOUT_PREFIX)) {
      reasons.push(`the timeout of ${state.timeoutSeconds ?? 0} s passed`);
    } else if (entry.message.provenance?.kind === 'announce') {
      reasons.push(`child ${entry.message.provenance.sourceSessionKey ?? 'sub-agent'} finished`);
    } else if (entry.id.startsWith(WATCH_INBOX_PREFIX)) {
      const watched = (entry.message.details as { watch?: { sessionKey?: unknown } } | undefined)?.watch;
      reasons.push(`watched session ${String(watched?.sessionKey ?? 'a session')} changed`);
    } else {
      message = true;
    }
  }
  if (message) reasons.push('a message arrived');
  if (reasons.length === 0) reasons.push('the runtime restarted the session');
  const waited = Math.max(0, Math.round((now - state.at) / 1000));
  const why = state.reason ? ` (waiting for: ${state.reason})` : '';
  return {
    role: 'user',
    content: `You yielded ${waited} s ago${why}; woke because: ${reasons.join('; ')}.`,
    timestamp: now,
    provenance: { kind: 'system', sourceTool: 'sessions_yield' },
    details: { yieldWake: { yieldId: state.id, reasons } },
  };
}
