import type { ChannelLease } from '@colloquy/core';
import type { Lane, RunStatus } from '@colloquy/core/gateway';
import type { StoreTransaction } from '@colloquy/core/store';

/** What one instance tells the others (small: it travels through the database). */
export type ClusterEvent =
  /** A run ended on the sending instance: wakes `agent.wait` callers everywhere. */
  | { type: 'run.ended'; runId: string; sessionKey: string; status: RunStatus }
  /** Stop this run wherever it runs (`agent.abort`, `subagents kill`). */
  | { type: 'run.abort'; runId: string; reason: string }
  /** A steering message waits in this session's inbox for its running turn. */
  | { type: 'session.steered'; sessionKey: string }
  /** What a channel plugin relayed to the same plugin on the other instances (`ChannelContext.relay`). */
  | { type: 'channel.relay'; channel: string; payload: unknown };

/** What the runtime does for the shared queue (see {@link ClusterAdapter.start}). */
export interface ClusterHandlers {
  /**
   * Runs the job of one stored run: resumes the session's runs an instance that died left
   * `running`, folds the session's queued runs that may share the turn, and runs it. Resolves when
   * the turn is over; never rejects for a run's own failure.
   */
  runJob(runId: string): Promise<void>;
  /** Delivers the pending announces of one requester session (its drain job). */
  drainJob(requesterSessionKey: string): Promise<void>;
  /** An event another instance published. */
  onEvent(event: ClusterEvent): void;
}

/** The lane limits the shared queue applies on this instance. */
export type LaneLimits = Readonly<Record<Lane, number>>;

/**
 * How a runtime shares its work with other instances on one database. Without one (the default),
 * runs wait in this process's command queue. `@colloquy/cluster` implements it on PostgreSQL with
 * graphile-worker: every run is a job on the named queue `session:<key>`, so one session runs one
 * turn at a time across all instances, and whichever instance has a free lane slot takes it.
 *
 * The runtime calls `scheduleRun` and `scheduleDrain` inside its own store transactions, so a run
 * and its job (or an announce and its drain job) commit together.
 */
export interface ClusterAdapter {
  /** Adds the job of a new `queued` run, inside the transaction that stores it. */
  scheduleRun(run: { runId: string; sessionKey: string; lane: Lane }, tx: StoreTransaction): Promise<void>;
  /**
   * Adds the job of a run that went back to `queued` (cut by a shutdown), outside any transaction.
   */
  requeueRun(run: { runId: string; sessionKey: string; lane: Lane }): Promise<void>;
  /** Adds a drain job for a requester, inside the transaction that wrote its announce. */
  scheduleDrain(requesterSessionKey: string, tx: StoreTransaction): Promise<void>;
  /** Adds a drain job for a requester (a poll found rows due for a retry). */
  requestDrain(requesterSessionKey: string): Promise<void>;
  /** Tells the other instances; delivery is best effort (callers also read the store). */
  publish(event: ClusterEvent): Promise<void>;
  /** Starts taking jobs and events; `limits` bound the runs of each lane on this instance. */
  start(handlers: ClusterHandlers, limits: LaneLimits): Promise<void>;
  /** Leases for single-connection channels (`ChannelContext.lease`); absent: granted at once. */
  lease?(name: string, signal?: AbortSignal): Promise<ChannelLease>;
  /**
   * Stops taking new jobs and resolves once the jobs in flight have settled (the runtime cuts
   * running turns when its drain budget is spent, so this does not wait forever).
   */
  stop(): Promise<void>;
}
