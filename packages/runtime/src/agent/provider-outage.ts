import { isColloquyError } from '@colloquy/core';
import type { RunRecord } from '@colloquy/core/gateway';
import { sleep } from '@colloquy/core/internal';
import { CIRCUIT_BREAKER_DEFAULTS } from '../providers/circuit-breaker.js';
import { isProviderFailure, type ModelFailureReason } from '../providers/model-errors.js';
import { toQueuedRun } from '../queue/queued-run.js';
import type { RuntimeContext } from '../runtime/runtime-context.js';
import type { ProviderOutage, TurnOutcome } from './turn-outcome.js';

/** What every chat user reads when a turn fails because the model provider is down: no internals. */
export const OUTAGE_NOTICE =
  'Sorry, the AI model is not answering just now, so I could not answer that. ' +
  'Messages you send meanwhile are kept and answered once it is back.';

/** The shortest wait before a held turn is queued again (the batch must have left the queue). */
const MIN_HOLD_MS = 50;

/** What a runtime remembers of provider outages, per session. */
interface OutageState {
  /** The sessions told about the current outage (until a turn of theirs succeeds). */
  told: Set<string>;
  /** The runs held out of the command queue (stored `queued`) until their wait is over, oldest first. */
  held: Map<string, RunRecord[]>;
}

const stateByRuntime = new WeakMap<RuntimeContext, OutageState>();

function outageState(ctx: RuntimeContext): OutageState {
  let state = stateByRuntime.get(ctx);
  if (!state) {
    state = { told: new Set(), held: new Map() };
    stateByRuntime.set(ctx, state);
  }
  return state;
}

/**
 * The provider outage behind a failed model call, when it was one: a call refused by the provider's
 * open circuit, or a failure that is the provider's (timeout, 5xx, refused or broken connection).
 *
 * @param error - what the model call threw
 * @returns the outage, or `undefined` for any other failure
 */
export function providerOutageOf(error: unknown): ProviderOutage | undefined {
  if (!isColloquyError(error)) return undefined;
  const { provider, reason, retryAfterMs, circuit } = error.details;
  if (typeof provider !== 'string') return undefined;
  const circuitOpen = reason === 'circuit-open';
  if (!circuitOpen && !isProviderFailure(reason as ModelFailureReason)) return undefined;
  return {
    provider,
    // A failure that left the circuit closed is one the provider may answer next time.
    down: circuitOpen || (circuit !== undefined && circuit !== 'closed'),
    ...(typeof retryAfterMs === 'number' ? { retryAfterMs } : {}),
  };
}

/**
 * Decides how a turn a provider outage failed ends, so that a chat gets one apology per outage and
 * not one per queued message:
 * - the session's first such turn fails with {@link OUTAGE_NOTICE} (the outcome is returned as is);
 * - later turns of a session already told go back to `queued` (`requeue`) and are queued again
 *   once the provider may answer ({@link holdTurn}): while the provider counts as down (its circuit
 *   is not closed) always, else up to `runtime.maxRunAttempts` starts of the turn;
 * - a turn over that bound fails without a second notice.
 *
 * A session is told again only after one of its turns succeeded ({@link outageOverFor}).
 *
 * @param ctx - the runtime internals
 * @param sessionKey - the turn's session
 * @param leader - the turn's first run (as begun)
 * @param outcome - the failed turn's outcome, with its `outage`
 * @returns the outcome to end the turn with
 */
export function settleOutage(
  ctx: RuntimeContext,
  sessionKey: string,
  leader: RunRecord,
  outcome: TurnOutcome & { outage: ProviderOutage },
): TurnOutcome {
  const { told } = outageState(ctx);
  if (!told.has(sessionKey)) {
    told.add(sessionKey);
    return outcome;
  }
  if (outcome.outage.down || leader.attempts < ctx.config.runtime.maxRunAttempts) {
    return { status: 'error', error: outcome.error, outage: outcome.outage, requeue: true };
  }
  const { notice: _second, ...withoutNotice } = outcome;
  return withoutNotice;
}

/**
 * Holds a turn's runs (stored `queued` by its end) until its provider may answer: after the
 * circuit's `retryAfterMs`, else after the provider's circuit-breaker cool-down. A restart runs
 * them too. The runs of later turns held meanwhile, and the messages that arrive meanwhile
 * ({@link joinHeldTurns}), wait with them; when the wait is over they all go back to the command
 * queue at once, oldest first, the way any queued run enters it, so they share one turn (one
 * answer) instead of each answering the last. With a cluster the shared queue adds the run's job
 * again when the turn returns, so the wait happens here (until `signal` aborts).
 *
 * @param ctx - the runtime internals
 * @param sessionKey - the turn's session
 * @param runs - the turn's runs, as its end stored them (`queued`)
 * @param outage - why it is held
 * @param signal - the turn's signal
 */
export async function holdTurn(
  ctx: RuntimeContext,
  sessionKey: string,
  runs: readonly RunRecord[],
  outage: ProviderOutage,
  signal: AbortSignal,
): Promise<void> {
  const coolDownMs =
    ctx.config.models.providers[outage.provider]?.circuitBreaker?.coolDownMs ??
    CIRCUIT_BREAKER_DEFAULTS.coolDownMs;
  const waitMs = Math.max(MIN_HOLD_MS, outage.retryAfterMs ?? coolDownMs);
  if (ctx.cluster) {
    // An abort (kill, shutdown) ends the wait early; the runs stay queued either way.
    await sleep(waitMs, signal).catch(() => {});
    return;
  }
  const { held } = outageState(ctx);
  const waiting = held.get(sessionKey);
  if (waiting) {
    waiting.push(...runs); // the pending wait takes this turn's runs too
    return;
  }
  held.set(sessionKey, [...runs]);
  const timer = setTimeout(() => releaseHeldTurns(ctx, sessionKey), waitMs);
  timer.unref();
}

/**
 * Adds a run stored `queued` to the session's held turns, when it has some: it then waits for
 * them rather than running ahead of them.
 *
 * @param ctx - the runtime internals
 * @param run - the run, as stored
 * @returns whether the run was held (else the caller queues it)
 */
export function joinHeldTurns(ctx: RuntimeContext, run: RunRecord): boolean {
  const waiting = stateByRuntime.get(ctx)?.held.get(run.sessionKey);
  waiting?.push(run);
  return waiting !== undefined;
}

/**
 * Whether the session has turns held by a provider outage: runs stored `queued` that the command
 * queue does not hold yet.
 *
 * @param ctx - the runtime internals
 * @param sessionKey - the session
 */
export function hasHeldTurns(ctx: RuntimeContext, sessionKey: string): boolean {
  return stateByRuntime.get(ctx)?.held.has(sessionKey) ?? false;
}

/** Hands a session's held runs back to the command queue, oldest first (their wait is over). */
function releaseHeldTurns(ctx: RuntimeContext, sessionKey: string): void {
  const { held } = outageState(ctx);
  const runs = held.get(sessionKey) ?? [];
  held.delete(sessionKey);
  if (!ctx.accepting) return; // shutting down: the stored `queued` runs wait for the restart
  const items = [...runs]
    .sort((a, b) => a.createdAt - b.createdAt)
    .map(toQueuedRun)
    .filter((item) => !ctx.queue.has(item.id));
  if (items.length > 0) ctx.queue.enqueueAll(items);
}

/**
 * Ends the outage for a session whose turn succeeded: its next outage gets a notice again.
 *
 * @param ctx - the runtime internals
 * @param sessionKey - the session
 */
export function outageOverFor(ctx: RuntimeContext, sessionKey: string): void {
  stateByRuntime.get(ctx)?.told.delete(sessionKey);
}
