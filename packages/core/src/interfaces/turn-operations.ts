import type { DeliveryOutcome } from './gateway.js';
import type { RunRecord, SessionRecord, StoredMessage, TokenUsage, TranscriptMessage } from './records.js';
import type { SessionPatch } from './store.js';

// The turn-level operations of the Store: a turn handed to the store as data, in three units of
// work (see `turnOperations` for the default every store gets).

/** Changes accepted for a run (as {@link StoreOperations.updateRun} merges them). */
export type RunPatch = Partial<Omit<RunRecord, 'runId'>>;

/**
 * The chat message a turn owes its chat, planned when the turn ends. Stored on the turn's leading
 * run as `meta.pendingDelivery` (a store may keep it in columns of its own; reads return it there).
 */
export interface PlannedDelivery {
  /** What the message is: the turn's reply, an error notice, or sub-agent fallback lines. */
  kind: 'reply' | 'error-notice' | 'announce';
  /** The text to send. */
  text: string;
  /** `plain`: send as is, no markdown conversion. */
  format?: 'plain';
  /** The platform message the reply quotes (groups and channels). */
  replyToMessageId?: string;
  /** The transcript seq of the turn's final assistant message, for its platform message id. */
  finalSeq?: number;
}

/**
 * Where a planned delivery stands, stored on the run as `meta.delivery`: `sending` is written
 * before the channel is called (so a send a crash cut is never repeated), the outcome after.
 * `queued` is a delivery kept in the outbox, not being sent at that moment (its chat's platform
 * failed and a retry is due, or an earlier message to the chat waits for one): it is sent later,
 * by this process or the next one.
 */
export type DeliveryState = { kind: PlannedDelivery['kind']; at: number } & (
  | { status: 'sending' }
  | DeliveryOutcome
  | {
      status: 'queued';
      /** Sends tried so far. */
      attempts: number;
      /** When the delivery entered the outbox (epoch ms): the retry age cap counts from here. */
      since: number;
      /** The last failure, when a send was tried. */
      error?: string;
    }
);

/** What {@link TurnOperations.commitInbound} writes: an addressed inbound message and its run. */
export interface InboundCommit {
  /**
   * The message's session: stored as `create` when it does not exist, else `update` is merged into
   * it (as {@link StoreOperations.patchSession} merges; `null` clears a field).
   */
  session: { create: SessionRecord; update: SessionPatch };
  /** The run, as stored when its turn does not begin in this commit (`status: 'queued'`). */
  run: RunRecord;
  /**
   * Begin the run's turn in the same commit, when the session then has no unconsumed inbox entry
   * and is not yielded (`meta.yield`): `input` is appended, `begin.run` is stored instead of `run`,
   * and `begin.session` is merged into the session after `session.update`. The caller offers it
   * only when nothing else of the session is queued or running and a lane is free.
   */
  begin?: { input: TranscriptMessage; run: RunRecord; session: SessionPatch };
}

/** What {@link TurnOperations.commitInbound} did. */
export type InboundCommitResult =
  /** A run with this id exists (the platform delivered the message again): nothing was written. */
  | { status: 'duplicate' }
  /** The run waits for its turn; the session is as stored. */
  | { status: 'queued'; session: SessionRecord; run: RunRecord }
  /** The turn began: the run is stored running and `input` is the stored input message. */
  | { status: 'begun'; session: SessionRecord; run: RunRecord; input: StoredMessage };

/** What {@link TurnOperations.endTurn} writes: a turn's end, with the chat message it owes. */
export interface TurnEnd {
  /** The turn's session. */
  sessionKey: string;
  /** Appended to the transcript first, when the session still exists. */
  finalMessage?: TranscriptMessage;
  /** Each run's final fields (leader first), merged as {@link StoreOperations.updateRun} merges. */
  runs: readonly { runId: string; patch: RunPatch }[];
  /** Merged into the session, when it still exists. */
  session: SessionPatch;
  /** Added to the session's `usage` (field by field) and `estimatedCostUsd`. */
  add?: { usage?: TokenUsage; costUsd?: number };
  /**
   * The chat message the turn owes: stored on run `runId` as `meta.pendingDelivery` (with
   * `finalSeq`, the seq of `finalMessage` when it was appended), and marked `sending` (`at`) when
   * the session still exists and the run has no delivery state yet. Merged into the run's `meta`:
   * the one in its patch, else the stored one.
   */
  delivery?: { runId: string; plan: PlannedDelivery; at: number };
}

/** What {@link TurnOperations.endTurn} stored, and what the runtime should do next. */
export interface TurnEndResult {
  /** The session after the end; `undefined` when it no longer exists. */
  session: SessionRecord | undefined;
  /** The runs as stored, in the order given. */
  runs: RunRecord[];
  /** The stored final message, when it was appended. */
  finalMessage?: StoredMessage;
  /** The planned delivery as stored, when it was marked `sending`: the caller sends it. */
  marked?: PlannedDelivery;
  /** The session has unconsumed inbox entries: its next turn is due. */
  inboxWaiting: boolean;
  /** A watch of the session is due (its version passed the watch's): its notice is due. */
  watched: boolean;
}

/** One delivery outcome for {@link TurnOperations.recordDeliveries}. */
export interface DeliveryRecord {
  /** The run whose planned delivery this is. */
  runId: string;
  /** The run's session. */
  sessionKey: string;
  /** Stored as the run's `meta.delivery`; nothing is written when the run does not exist. */
  state: DeliveryState;
  /** Sets the platform message id of transcript message `seq` (a missing message is ignored). */
  platformMessage?: { seq: number; id: string };
  /** Appended to the transcript, when the session still exists. */
  transcript?: TranscriptMessage;
}

/**
 * A turn as three units of work: the inbound message in, the turn's end, the sends' outcomes.
 * Each is one transaction. A store implements them as optional {@link StoreOperations} methods to
 * do them in fewer statements; `turnOperations(store)` gives every store all three, its own or
 * core's defaults built on the row-level calls.
 */
export interface TurnOperations {
  /**
   * Stores an addressed inbound message as a run: creates or updates its session, and creates
   * the run, `queued`, or already begun (see {@link InboundCommit.begin}). One transaction.
   */
  commitInbound(inbound: InboundCommit): Promise<InboundCommitResult>;
  /**
   * Ends a turn: appends its final message, stores its runs' final fields and its session's, adds
   * its usage and cost, and plans (and marks) the chat message it owes. One transaction.
   */
  endTurn(end: TurnEnd): Promise<TurnEndResult>;
  /** Records the outcomes of planned deliveries, in order. One transaction for the batch. */
  recordDeliveries(records: readonly DeliveryRecord[]): Promise<void>;
}
