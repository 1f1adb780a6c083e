import type { AgentRunResult } from '@colloquy/core/gateway';
import type { ModelMessage } from '@colloquy/core/model';
import type { MessageProvenance } from '@colloquy/core/store';
import type { TurnEndHook } from '../runtime/turn-end-hook-types.js';

/** Tuning of announce delivery and the sub-agent sweep. */
export interface SubagentRuntimeOptions {
  /** First retry delay of a failed announce delivery (to the inbox); doubles each attempt. Default 1000 ms. */
  retryBaseMs?: number;
  /** The longest retry delay. Default 300,000 ms (5 minutes). */
  retryMaxMs?: number;
  /** How often due outbox rows are looked for. Default 1000 ms. */
  pollMs?: number;
  /** How often the archive/cleanup sweep runs. Default 60,000 ms. */
  sweepMs?: number;
}

/** What one `sweepSubagents` pass did. */
export interface SweepReport {
  /** Kept sub-agents archived (`archivedAt` set) after `archiveAfterMinutes`. */
  archived: string[];
  /** `cleanup: "delete"` sub-agents removed because their announce was done (e.g. before a crash). */
  deleted: string[];
  /** Ended runs that had no outbox row (written now, so their result is still announced). */
  reconciled: string[];
}

/** The sub-agent machinery of a runtime: the announce outbox, its delivery, steering and cleanup. */
export interface SubagentRegistry {
  /** Writes outbox rows inside the transaction that ends a run (registered as a turn-end hook). */
  readonly turnEndHook: TurnEndHook;
  /** The root of session workspaces (attachments). */
  readonly workspaceRoot: string;
  /** Tells the registry that a session's turn settled (its queue slot is free). */
  turnSettled(sessionKey: string): void;
  /** `agent` with `steer: true` (see `steerSession`). */
  steer(
    sessionKey: string,
    message: string,
    provenance: MessageProvenance | undefined,
  ): Promise<AgentRunResult>;
  /** Steering messages for a running turn, before its next model step. */
  takeSteering(sessionKey: string): Promise<ModelMessage[]>;
  /** Delivers every due pending announce now (`force`: also those waiting for a retry). */
  drain(options?: { force?: boolean }): Promise<void>;
  /** Delivers the due pending announces of one requester (a cluster's drain job). */
  drainRequester(requesterSessionKey: string): Promise<void>;
  /** Tells the registry that a steering message waits for the session's running turn. */
  noteSteered(sessionKey: string): void;
  /** Archives, deletes and reconciles (see `sweepSubagents`). */
  sweep(now?: number): Promise<SweepReport>;
  /** Delivers what the previous process left pending and starts the timers. */
  start(): Promise<void>;
  /** Stops the timers and waits for deliveries in flight. */
  stop(): Promise<void>;
}
