import type { ModelProviderTimeouts } from '@colloquy/core/model';

/**
 * Defaults of `models.providers.<id>.timeouts`. `idleMs` yields to the `idleTimeoutMs` option when
 * that is set, and `firstByteMs` defaults to the idle timeout.
 */
export const PROVIDER_TIMEOUT_DEFAULTS = { idleMs: 120_000, totalMs: 600_000 } as const;

/** Which deadline a call missed. */
export type DeadlineKind = 'first-byte' | 'idle' | 'total';

/** A missed deadline: which one, and how long it was. */
export interface MissedDeadline {
  kind: DeadlineKind;
  timeoutMs: number;
}

/** The deadlines of one attempt. See {@link startCallDeadlines}. */
export interface CallDeadlines {
  /** A part arrived: the first-byte or idle timer stops while the consumer takes it. */
  partArrived(): void;
  /** The consumer is done with the part: the idle timer starts again. */
  awaitNext(): void;
  /** The deadline that fired, if one did. */
  missed(): MissedDeadline | undefined;
  /** Clears the timers. Idempotent. */
  stop(): void;
}

/**
 * Starts the deadlines of one attempt as its request is sent: the first part must arrive within
 * `firstByteMs`, each next one within `idleMs` of the last, and the whole call must end within
 * `totalMs`. A missed deadline calls `onMissed` once (which aborts the attempt).
 *
 * @param timeouts - the resolved timeouts, in ms
 * @param onMissed - called with the deadline that fired
 * @returns the running deadlines
 */
export function startCallDeadlines(
  timeouts: Required<ModelProviderTimeouts>,
  onMissed: (missed: MissedDeadline) => void,
): CallDeadlines {
  let missed: MissedDeadline | undefined;
  let phase: NodeJS.Timeout | undefined;
  let firstPart = true;

  const fire = (kind: DeadlineKind, timeoutMs: number) => () => {
    if (missed) return;
    missed = { kind, timeoutMs };
    onMissed(missed);
  };
  const arm = (kind: DeadlineKind, timeoutMs: number) => {
    if (phase) clearTimeout(phase);
    phase = setTimeout(fire(kind, timeoutMs), timeoutMs);
  };
  const total = setTimeout(fire('total', timeouts.totalMs), timeouts.totalMs);
  arm('first-byte', timeouts.firstByteMs);

  return {
    partArrived() {
      firstPart = false;
      if (phase) clearTimeout(phase);
      phase = undefined;
    },
    awaitNext() {
      if (!firstPart) arm('idle', timeouts.idleMs);
    },
    missed: () => missed,
    stop() {
      if (phase) clearTimeout(phase);
      clearTimeout(total);
    },
  };
}
