import type { SessionYieldState } from '@colloquy/core/gateway';

/** The yield timers of one runtime: one per yielded session with a timeout. */
export interface YieldTimers {
  /** Arms (or re-arms) the timeout wake of a yield; a state without deadline only disarms. */
  arm(sessionKey: string, state: SessionYieldState): void;
  disarm(sessionKey: string): void;
  /** Re-arms the timeouts stored on sessions by an earlier process (overdue ones fire at once). */
  restore(): Promise<void>;
  /** Clears every timer (shutdown). */
  stop(): void;
}
