import type { TranscriptMessage } from '@colloquy/core';
import type { RunStatus } from '@colloquy/core/gateway';
import type { TokenUsage } from '@colloquy/core/model';

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
  /** Cut by shutdown: put the runs back to `queued` so a restart runs them again. */
  requeue?: boolean;
}
