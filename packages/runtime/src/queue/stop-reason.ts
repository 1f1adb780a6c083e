import { ColloquyError, isColloquyError } from '@colloquy/core';

/**
 * Why a queued or running batch was stopped:
 * - `killed`: an explicit abort (`agent.abort`, `sessions.delete`, a kill cascade);
 * - `timeout`: the run's own timeout elapsed;
 * - `shutdown`: the runtime is shutting down and the run should be resumed after a restart.
 */
export type StopKind = 'killed' | 'timeout' | 'shutdown';

/**
 * Builds the value passed to `AbortController.abort()` for a stop of the given kind, so that the
 * code holding only the `AbortSignal` can tell why it was aborted (see {@link stopKindOf}).
 *
 * @param kind - why the run stops
 * @param message - a human sentence, recorded as the run's `error`
 * @returns a `ColloquyError` (`TIMEOUT` for timeouts, else `ABORTED`) with `details.stop = kind`
 */
export function stopReason(kind: StopKind, message: string): ColloquyError {
  return new ColloquyError(kind === 'timeout' ? 'TIMEOUT' : 'ABORTED', message, { stop: kind });
}

/**
 * Reads the {@link StopKind} from an aborted signal. A signal aborted with anything other than
 * {@link stopReason} counts as `killed`.
 *
 * @param signal - the run's signal
 * @returns the stop kind, or `undefined` when the signal is not aborted
 */
export function stopKindOf(signal: AbortSignal): StopKind | undefined {
  if (!signal.aborted) return undefined;
  const reason: unknown = signal.reason;
  if (isColloquyError(reason)) {
    const stop = reason.details.stop;
    if (stop === 'killed' || stop === 'timeout' || stop === 'shutdown') return stop;
  }
  return 'killed';
}

/**
 * The message of an aborted signal's reason, for the run's `error` field.
 *
 * @param signal - an aborted signal
 * @returns the reason's message, or a generic sentence
 */
export function stopMessageOf(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  if (reason instanceof Error && reason.message) return reason.message;
  return 'The run was aborted.';
}
