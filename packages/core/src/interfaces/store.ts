import type {
  InboxEntry,
  McpTokenRecord,
  OutboxEntry,
  OutboxStatus,
  PairingRecord,
  PairingStatus,
  RunRecord,
  RunStatus,
  SessionChangeKind,
  SessionKind,
  SessionRecord,
  SessionWatch,
  StoredMessage,
  ThreadBinding,
  TranscriptMessage,
} from './records.js';
import type {
  DeliveryRecord,
  InboundCommit,
  InboundCommitResult,
  TurnEnd,
  TurnEndResult,
} from './turn-operations.js';

/** Filters for {@link StoreOperations.listSessions}. All are pushed into the query; none needs a full scan. */
export interface SessionListQuery {
  /** Only these kinds. Empty or absent: all kinds. */
  kinds?: readonly SessionKind[];
  /** Only sessions with `updatedAt >= now - activeMinutes * 60_000`. */
  activeMinutes?: number;
  /** The clock for `activeMinutes` (default `Date.now()`). */
  now?: number;
  /**
   * Only direct children of this session key, or of any of these keys (an empty list matches
   * nothing): a list reads one level of a spawn tree in one query. A store answers a list through
   * its spawner index (`spawned_by IN (...)`), reading every child of those spawners before the sort,
   * so such a list costs O(children of those spawners), whatever `limit` says.
   */
  spawnedBy?: string | readonly string[];
  /** Only sessions of these agents. */
  agentIds?: readonly string[];
  /** Only these exact keys. */
  keys?: readonly string[];
  /**
   * Also the sessions with these exact keys, whatever `keys` and `agentIds` say (the other filters
   * still apply): a scope of some agents plus a few sessions of others. No effect when neither
   * `keys` nor `agentIds` narrows the query.
   */
  alsoKeys?: readonly string[];
  /** Only the session with this `sessionId` (at most one row, since session ids are unique). */
  sessionId?: string;
  /** Only sessions with exactly this label. */
  label?: string;
  /**
   * Only sessions seeded with forked history (`SessionRecord.forked`), when true. An index keeps
   * this O(result): forks are few beside the sessions they sit among.
   */
  onlyForked?: boolean;
  /** Include archived sessions (default false). */
  includeArchived?: boolean;
  /** At most this many rows (default: no limit). Applied after sorting. */
  limit?: number;
  /** Skip this many rows first (default 0), after sorting and before `limit`. */
  offset?: number;
}

/**
 * A full-text search of transcripts ({@link StoreOperations.searchMessages}). Every word of
 * `text` must occur in a message (case-insensitive, whole words). Tool results are never
 * indexed, nor are thinking blocks, tool-call arguments or attachment content: only the text a
 * user or assistant wrote. Archived sessions are searched; deleted ones are gone.
 */
export interface MessageSearchQuery {
  /** The words to find; see `searchTerms` for how text is split into words. */
  text: string;
  /** Only sessions of these kinds. Empty or absent: all kinds. */
  kinds?: readonly SessionKind[];
  /** Only these exact session keys. */
  keys?: readonly string[];
  /** Only sessions of these agents. */
  agentIds?: readonly string[];
  /**
   * Also the sessions with these exact keys, whatever `keys` and `agentIds` say (the other filters
   * still apply): a scope of some agents plus a few sessions of others. No effect when neither
   * `keys` nor `agentIds` narrows the query.
   */
  alsoKeys?: readonly string[];
  /** At most this many hits (default: no limit; 0 only counts). */
  limit?: number;
  /** Skip this many hits first (default 0). */
  offset?: number;
}

/** One message found by {@link StoreOperations.searchMessages}. */
export interface MessageSearchHit {
  /** The internal key of the session whose transcript holds the message. */
  sessionKey: string;
  /** The matching message. */
  message: StoredMessage;
}

/** Hits best first (ties: session key ascending, then newest `seq` first) and how many matched. */
export interface MessageSearchResult {
  /** The page of hits selected by `limit` and `offset`. */
  hits: MessageSearchHit[];
  /** How many messages matched, ignoring `limit` and `offset`. */
  total: number;
}

/** Options of {@link StoreOperations.readTail}. */
export interface TailOptions {
  /** Only messages with `seq < beforeSeq`. */
  beforeSeq?: number;
  /**
   * Only messages with `seq > afterSeq`: what was appended since a message already read (the
   * newest `limit` of them, so a page as long as `limit` may not be all of them).
   */
  afterSeq?: number;
  /** Skip the newest `offset` messages (after `beforeSeq`), default 0. */
  offset?: number;
}

/** Filters for {@link StoreOperations.listRuns}. Sorted by `createdAt`, newest first. */
export interface RunListQuery {
  /** Only runs of this session. */
  sessionKey?: string;
  /** Only runs whose `spawnedBy` is this session key. */
  spawnedBy?: string;
  /** Only runs in these statuses. Empty or absent: all statuses. */
  statuses?: readonly RunStatus[];
  /** At most this many rows (default: no limit). */
  limit?: number;
}

/** Filters for {@link StoreOperations.listOutbox}. Sorted by `createdAt`, oldest first. */
export interface OutboxListQuery {
  /** Only entries in these statuses (default `['pending']`). */
  statuses?: readonly OutboxStatus[];
  /** Only entries addressed to this session. */
  requesterSessionKey?: string;
  /** Only entries with `nextAttemptAt <= dueBefore`. */
  dueBefore?: number;
  /** At most this many rows (default: no limit). */
  limit?: number;
}

/** Filters for {@link StoreOperations.listPairings}. Sorted by `createdAt`, oldest first. */
export interface PairingListQuery {
  /** The channel plugin id (required: pairing state is per channel). */
  channel: string;
  /** Only pairings of this bot account. */
  accountId?: string;
  /** Only pairings in this status. */
  status?: PairingStatus;
  /** Only the pending pairing with this code. */
  code?: string;
}

/** Filters of {@link StoreOperations.listMcpTokens}. */
export interface McpTokenListQuery {
  /** Only tokens of this agent. */
  agentId?: string;
  /** Include revoked tokens (default false). */
  includeRevoked?: boolean;
}

/** Changes accepted by {@link StoreOperations.patchSession}; `null` clears an optional field. */
export type SessionPatch = {
  [K in Exclude<keyof SessionRecord, 'key' | 'stateVersion'>]?: SessionRecord[K] | null;
};

/**
 * The changes of a session after a version ({@link StoreOperations.readChanges}): kinds and
 * counts, never content. Stores keep the kind of each of a session's newest
 * `SESSION_CHANGE_WINDOW` changes (older ones are pruned), so a version further back is answered
 * from `fromVersion` on, with `truncated: true`.
 */
export interface SessionChanges {
  /** The version the counts start after: the version asked for, or the oldest one still kept. */
  fromVersion: number;
  /** The session's current `stateVersion`. */
  toVersion: number;
  /** How many changes of each kind happened in `(fromVersion, toVersion]`. */
  changes: Record<SessionChangeKind, number>;
  /** True when the version asked for is older than the kept window: older changes are not counted. */
  truncated: boolean;
}

/** Filters for {@link StoreOperations.listWatches}. Sorted by `createdAt`, oldest first. */
export interface WatchListQuery {
  /** Only watches set by this session. */
  watcherKey?: string;
  /** Only watches on this session. */
  targetKey?: string;
  /** Only watches whose target's `stateVersion` passed their `afterVersion`. */
  due?: boolean;
  /** At most this many rows (default: no limit). */
  limit?: number;
}

/**
 * The data methods of a {@link Store}. A {@link StoreTransaction} has the same methods, bound to
 * one open transaction.
 *
 * Every method returns a Promise and rejects with `ColloquyError` (`STORE_ERROR`,
 * `SESSION_NOT_FOUND`, `CONFLICT`, ...) on failure. Each call on its own is atomic: a
 * multi-row write (`appendMessages`, `deleteSession`, `consumeInbox`) is all or nothing, and no
 * caller ever sees half of it. Calls made one after another (each awaited) take effect in that
 * order; calls left in flight together may take effect in any order.
 */
export interface StoreOperations {
  // --- sessions ---
  /** The session stored under `key`, archived or not. */
  getSession(key: string): Promise<SessionRecord | undefined>;
  /**
   * Inserts or replaces the whole record.
   * @throws `CONFLICT` when `record.sessionId` belongs to another key
   */
  putSession(record: SessionRecord): Promise<void>;
  /**
   * Merges `patch` into the record and returns the result; `null` clears a field. The read and
   * the write are one atomic step, so two concurrent patches of one session never lose a field.
   * @throws `SESSION_NOT_FOUND`; `CONFLICT` when a new `sessionId` belongs to another key
   */
  patchSession(key: string, patch: SessionPatch): Promise<SessionRecord>;
  /**
   * Deletes the session with its transcript, inbox, thread bindings, change log and the watches
   * it set or is the target of, atomically. Runs and outbox rows are kept (they are history).
   * Resolves false when there was no such session.
   */
  deleteSession(key: string): Promise<boolean>;
  /**
   * Sessions matching `query`, newest `updatedAt` first (ties: key ascending). Costs O(result)
   * with the filters pushed into the query, so a `limit` keeps it cheap however many sessions
   * exist. Also serves lookups by `sessionId` and by `label`.
   */
  listSessions(query?: SessionListQuery): Promise<SessionRecord[]>;
  /** How many sessions match `query`, ignoring `limit`. */
  countSessions(query?: SessionListQuery): Promise<number>;

  // --- transcripts ---
  /**
   * Appends in order, atomically, and returns the stored messages with their `seq` (strictly
   * increasing per session, gap-free within one call).
   * @throws `SESSION_NOT_FOUND`
   */
  appendMessages(sessionKey: string, messages: readonly TranscriptMessage[]): Promise<StoredMessage[]>;
  /**
   * The last `limit` messages in ascending `seq`, optionally only those with `seq < beforeSeq`,
   * and skipping the newest `offset` of those (default 0). O(limit), whatever the transcript's
   * length and however deep the offset.
   */
  readTail(sessionKey: string, limit: number, options?: TailOptions): Promise<StoredMessage[]>;
  /** How many messages the session's transcript holds. */
  countMessages(sessionKey: string): Promise<number>;
  /**
   * Full-text search over transcripts, ranked best first, with the filters, `limit` and `offset`
   * pushed into the query. The index is written in the same transaction as the append, so a
   * rolled-back append leaves no hit behind.
   */
  searchMessages(query: MessageSearchQuery): Promise<MessageSearchResult>;
  /**
   * Records the platform message id on a delivered transcript message (by `seq`). A missing
   * message is ignored: the run's `meta.delivery` keeps the id either way.
   */
  setMessagePlatformId(sessionKey: string, seq: number, platformMessageId: string): Promise<void>;

  // --- runs ---
  /**
   * Inserts a new run.
   * @throws `CONFLICT` when `run.runId` exists
   */
  createRun(run: RunRecord): Promise<void>;
  /** The run with this id. */
  getRun(runId: string): Promise<RunRecord | undefined>;
  /**
   * Merges `patch` (undefined fields are ignored) and returns the result, as one atomic step.
   * @throws `RUN_NOT_FOUND`
   */
  updateRun(runId: string, patch: Partial<Omit<RunRecord, 'runId'>>): Promise<RunRecord>;
  /** Runs matching `query`, newest `createdAt` first. */
  listRuns(query?: RunListQuery): Promise<RunRecord[]>;

  // --- announce outbox ---
  /** Inserts unless `(childSessionKey, runId)` exists. Resolves true when inserted. */
  putOutbox(entry: OutboxEntry): Promise<boolean>;
  /** The outbox row of `(childSessionKey, runId)`. */
  getOutbox(childSessionKey: string, runId: string): Promise<OutboxEntry | undefined>;
  /**
   * Merges `patch` and returns the result, as one atomic step.
   * @throws `STORE_ERROR` when the row does not exist
   */
  updateOutbox(
    childSessionKey: string,
    runId: string,
    patch: Partial<Omit<OutboxEntry, 'childSessionKey' | 'runId'>>,
  ): Promise<OutboxEntry>;
  /** Outbox rows matching `query`, oldest `createdAt` first. */
  listOutbox(query?: OutboxListQuery): Promise<OutboxEntry[]>;

  // --- session inbox ---
  /** Insert-or-ignore on `(sessionKey, id)`. Resolves true when inserted. */
  putInbox(entry: InboxEntry): Promise<boolean>;
  /** Unconsumed entries of a session, oldest first. */
  listInbox(sessionKey: string): Promise<InboxEntry[]>;
  /**
   * The keys of the sessions with unconsumed inbox entries, in key order. A runtime reads this at
   * start to wake the sessions whose wake a crash cut (the entry was stored, its turn was not).
   */
  listInboxSessionKeys(): Promise<string[]>;
  /** Marks entries consumed, atomically; unknown or already consumed ids are ignored. */
  consumeInbox(sessionKey: string, ids: readonly string[], at: number): Promise<void>;

  // --- watching ---
  /**
   * The changes of a session after `sinceVersion` (clamped to `[toVersion - window, toVersion]`),
   * or `undefined` when there is no such session. O(window) at most, whatever the session's age.
   */
  readChanges(sessionKey: string, sinceVersion: number): Promise<SessionChanges | undefined>;
  /** Inserts the watch, replacing the one of the same `(watcherKey, targetKey)`. */
  putWatch(watch: SessionWatch): Promise<void>;
  /** Watches matching `query`, oldest `createdAt` first. */
  listWatches(query?: WatchListQuery): Promise<SessionWatch[]>;
  /**
   * Deletes the watch of `(watcherKey, targetKey)`, only if its id is `id` when given (so a
   * notice never removes a newer registration). Resolves true when a watch was deleted.
   */
  deleteWatch(watcherKey: string, targetKey: string, id?: string): Promise<boolean>;

  // --- thread bindings ---
  /** Inserts or replaces the binding for `(channel, accountId, threadId)`. */
  putThreadBinding(binding: ThreadBinding): Promise<void>;
  /** The binding of `(channel, accountId, threadId)`. */
  getThreadBinding(channel: string, accountId: string, threadId: string): Promise<ThreadBinding | undefined>;
  /** Bindings, filtered by bound session and/or channel when given. */
  listThreadBindings(query?: { sessionKey?: string; channel?: string }): Promise<ThreadBinding[]>;
  /** Resolves true when a binding was deleted. */
  deleteThreadBinding(channel: string, accountId: string, threadId: string): Promise<boolean>;

  // --- pairing (who may DM a bot) ---
  /** Inserts or replaces the pairing of `(channel, accountId, peerId)`. */
  putPairing(record: PairingRecord): Promise<void>;
  /** The pairing of `(channel, accountId, peerId)`. */
  getPairing(channel: string, accountId: string, peerId: string): Promise<PairingRecord | undefined>;
  /** Pairings matching `query`, oldest `createdAt` first. */
  listPairings(query: PairingListQuery): Promise<PairingRecord[]>;
  /** Resolves true when a pairing was deleted. */
  deletePairing(channel: string, accountId: string, peerId: string): Promise<boolean>;

  // --- MCP access tokens (optional: a store without them cannot serve MCP; see `mcpTokenStore`) ---
  /**
   * Inserts a token record. @throws `CONFLICT` when its `id` or `hash` is already stored.
   */
  putMcpToken?(record: McpTokenRecord): Promise<void>;
  /** The token whose `hash` this is, revoked or not. */
  getMcpTokenByHash?(hash: string): Promise<McpTokenRecord | undefined>;
  /** Tokens matching `query`, oldest `createdAt` first. */
  listMcpTokens?(query?: McpTokenListQuery): Promise<McpTokenRecord[]>;
  /** Sets `revokedAt` on an active token; resolves false when no active token has this id. */
  revokeMcpToken?(id: string, at: number): Promise<boolean>;

  // --- batched reads (optional: `batchReads(store)` falls back to one call per session) ---
  /**
   * `BatchReads.listRunsOfSessions`, done natively: the newest `limit` runs of each session in one
   * call, as `listRuns({ sessionKey, limit })` returns them.
   */
  listRunsOfSessions?(sessionKeys: readonly string[], limit: number): Promise<RunRecord[][]>;
  /**
   * `BatchReads.readTails`, done natively: the last `limit` messages of each session in one call, as
   * `readTail(sessionKey, limit)` returns them.
   */
  readTails?(sessionKeys: readonly string[], limit: number): Promise<StoredMessage[][]>;

  // --- turn operations (optional: `turnOperations(store)` falls back to core's defaults) ---
  /**
   * `TurnOperations.commitInbound`, done natively: same outcome as core's default, in one
   * transaction (joined when called on a transaction handle).
   */
  commitInbound?(inbound: InboundCommit): Promise<InboundCommitResult>;
  /** `TurnOperations.endTurn`, done natively (see {@link StoreOperations.commitInbound}). */
  endTurn?(end: TurnEnd): Promise<TurnEndResult>;
  /** `TurnOperations.recordDeliveries`, done natively (see {@link StoreOperations.commitInbound}). */
  recordDeliveries?(records: readonly DeliveryRecord[]): Promise<void>;
}

/**
 * One open transaction: the {@link StoreOperations} bound to it. Valid only until the
 * function given to {@link Store.transaction} settles.
 */
export interface StoreTransaction extends StoreOperations {
  /** Joins this transaction: runs `fn` with the same handle (no savepoint, no new transaction). */
  transaction<T>(fn: (tx: StoreTransaction) => Promise<T>): Promise<T>;
}

/**
 * Durable state for Colloquy: sessions, transcripts, runs, the announce outbox and inboxes,
 * thread bindings and pairing. Implementations: `MemoryStore` (core), `SqliteStore`
 * (`@colloquy/store-sqlite`) and `PostgresStore` (`@colloquy/store-postgres`); every one passes
 * the conformance suite in `@colloquy/testkit/store-conformance`.
 *
 * The contract is asynchronous, so a store may live in another process or on another machine.
 * Group writes that must land together with {@link Store.transaction}; a function that takes a
 * {@link StoreTransaction} works with a Store too (its `transaction` opens one) and with a
 * transaction handle (its `transaction` joins).
 *
 * @example
 * ```ts
 * await store.transaction(async (tx) => {
 *   await tx.createRun(run);
 *   await tx.appendMessages(run.sessionKey, [input]);
 * });
 * ```
 */
export interface Store extends StoreTransaction {
  /**
   * Runs `fn` in a transaction and resolves with its result. Every write made through `tx`
   * commits together, or, if `fn` rejects, none does (the error is rethrown). Reads through
   * `tx` see the transaction's own writes; nothing outside sees them before the commit, and
   * two overlapping transactions never see each other's partial writes. Concurrent patches of
   * one row are serialised (a row lock or a single writer), never lost.
   *
   * Inside `fn`, call only `tx`: a call on the store itself would wait for this transaction
   * (or run outside it), so stores reject it with `STORE_ERROR`.
   */
  transaction<T>(fn: (tx: StoreTransaction) => Promise<T>): Promise<T>;

  /**
   * A best-effort locator for a session's transcript, e.g. `sqlite:colloquy.db#<sessionId>` or
   * `postgres:<sessionId>`. Models and chats see it: it must name no credentials, connection
   * details or absolute server paths.
   */
  transcriptLocator(session: SessionRecord): string | undefined;

  /**
   * Optional, for stores that acknowledge writes before they are durable (`SqliteStore` with
   * group commit): resolves once every write acknowledged before the call is durable, and
   * rejects (`STORE_ERROR`) when any of them was lost, so they must not be reported as done.
   * Stores without it have nothing to wait for; callers use `await store.flush?.()`.
   */
  flush?(): Promise<void>;

  /** Waits for work in flight, then releases resources. Later calls reject with `STORE_ERROR`. */
  close(): Promise<void>;
}
