import type { ModelProviderCircuitBreaker } from '@colloquy/core/model';

/** Defaults of `models.providers.<id>.circuitBreaker`. */
export const CIRCUIT_BREAKER_DEFAULTS = { failureThreshold: 5, coolDownMs: 30_000 } as const;

/**
 * How long a call refused during a probe is told to wait (at most the cool-down): the probe is
 * usually answered, or timed out, well before a whole cool-down.
 */
const PROBE_RETRY_MS = 1_000;

/** `closed`: calls go through; `open`: calls are refused; `half-open`: one probe is in flight or due. */
export type CircuitState = 'closed' | 'open' | 'half-open';

/** What {@link CircuitBreaker.admit} decided. */
export type CircuitAdmission =
  | { ok: true; probe: boolean }
  | { ok: false; state: Exclude<CircuitState, 'closed'>; retryAfterMs: number };

/** A change of state, reported once when it happens. */
export interface CircuitTransition {
  /** The state before. */
  from: CircuitState;
  /** The state after. */
  to: CircuitState;
  /** Failures in a row when it happened. */
  consecutiveFailures: number;
}

/** Breaker figures for status output and tests. */
export interface CircuitBreakerStats {
  /** `closed` (calls go through), `open` (refused at once) or `half-open` (one probe). */
  state: CircuitState;
  /** Provider failures in a row (0 after a success). */
  consecutiveFailures: number;
  /** How long until an open circuit lets a probe through (0 unless open). */
  retryAfterMs: number;
}

/** The circuit breaker of one provider. See {@link createCircuitBreaker}. */
export interface CircuitBreaker {
  /** Asks to make a call; a call admitted must end with exactly one of the three reports below. */
  admit(): CircuitAdmission;
  /** The call succeeded: the provider is up. */
  succeeded(probe: boolean): void;
  /** The call failed because of the provider (timeout, 5xx, refused or reset connection). */
  failed(probe: boolean): void;
  /** The call ended in a way that says nothing about the provider (aborted, 4xx, bad content). */
  settled(probe: boolean): void;
  stats(): CircuitBreakerStats;
}

/**
 * Creates the circuit breaker of one provider: after `failureThreshold` provider failures in a row it
 * opens, and calls are refused at once for `coolDownMs`; then it is half-open and lets one probe
 * through; a probe that succeeds closes it, one that fails opens it again for another cool-down.
 *
 * @param options - `models.providers.<id>.circuitBreaker` (defaults: 5 failures, 30000 ms)
 * @param onTransition - called once per change of state (for the log)
 * @param now - the clock (ms); default `performance.now`, which no wall-clock jump moves
 * @returns the breaker
 */
export function createCircuitBreaker(
  options: ModelProviderCircuitBreaker = {},
  onTransition: (transition: CircuitTransition) => void = () => {},
  now: () => number = () => performance.now(),
): CircuitBreaker {
  const threshold = options.failureThreshold ?? CIRCUIT_BREAKER_DEFAULTS.failureThreshold;
  const coolDownMs = options.coolDownMs ?? CIRCUIT_BREAKER_DEFAULTS.coolDownMs;
  let state: CircuitState = 'closed';
  let consecutiveFailures = 0;
  let openedAt = 0;
  let probing = false;

  function moveTo(to: CircuitState): void {
    if (to === state) return;
    const from = state;
    state = to;
    onTransition({ from, to, consecutiveFailures });
  }

  function open(): void {
    openedAt = now();
    probing = false;
    moveTo('open');
  }

  return {
    admit() {
      if (state === 'open') {
        const left = openedAt + coolDownMs - now();
        if (left > 0) return { ok: false, state, retryAfterMs: Math.ceil(left) };
        moveTo('half-open');
      }
      if (state === 'half-open') {
        if (probing) {
          return { ok: false, state, retryAfterMs: Math.min(PROBE_RETRY_MS, coolDownMs) };
        }
        probing = true;
        return { ok: true, probe: true };
      }
      return { ok: true, probe: false };
    },

    succeeded(probe) {
      if (probe) probing = false;
      consecutiveFailures = 0;
      moveTo('closed');
    },

    failed(probe) {
      if (probe) probing = false;
      consecutiveFailures++;
      if (probe || (state === 'closed' && consecutiveFailures >= threshold)) open();
    },

    settled(probe) {
      if (probe) probing = false;
    },

    stats: () => ({
      state,
      consecutiveFailures,
      retryAfterMs: state === 'open' ? Math.max(0, Math.ceil(openedAt + coolDownMs - now())) : 0,
    }),
  };
}
