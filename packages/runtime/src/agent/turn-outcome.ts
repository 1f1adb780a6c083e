import type { TranscriptMessage } from '@colloquy/core';
import type { RunStatus } from '@colloquy/core/gateway';
import type { TokenUsage } from '@colloquy/core/model';

/** A model provider that is down or failing, behind a failed turn (see `providerOutageOf`). */
export interface ProviderOutage {
  /** The provider id. */
  provider: string;
  /** True when the provider counts as down: its circuit breaker is open or probing. */
  down: boolean;
  /** How long until the provider's circuit lets a call through, when it said. */
  retryAfterMs?: number;
}

/** How a turn ended, as the executor saw it. */
export interface TurnOutcome {
  status: Extract<RunStatus, 'done' | 'error' | 'timeout' | 'killed'>;
  /** The final assistant message to commit with the end of the turn. */
  finalMessage?: TranscriptMessage;
  reply?: string;
  error?: string;
  /** A notice for the user (error and timeout endings); delivered when the run delivers. */
  notice?: string;
  usage?: TokenUsage;
  costUsd?: number;
  /**
   * Put the runs back to `queued`: cut by shutdown (a restart runs them again), or held while the
   * model provider is down (`outage`; queued again when it may answer).
   */
  requeue?: boolean;
  /** The model provider outage that failed the turn, if that is what failed it. */
  outage?: ProviderOutage;
}
