import type {
  InboxEntry,
  OutboxEntry,
  OutboxStatus,
  RunRecord,
  RunStatus,
  SessionKind,
  SessionRecord,
  StoredMessage,
  ThreadBinding,
  TranscriptMessage,
} from './records.js';

/** Filters for {@link Store.listSessions}. All are pushed into the query; none needs a full scan. */
export interface SessionListQuery {
  /** Only these kinds. Empty or absent: all kinds. */
  kinds?: readonly SessionKind[];
  /** Only sessions with `updatedAt >= now - activeMinutes * 60_000`. */
  activeMinutes?: number;
  /** The clock for `activeMinutes` (default `Date.now()`). */
  now?: number;
  /** Only direct children of this session key. */
  spawnedBy?: string;
  /** Only sessions of these agents. */
  agentIds?: readonly string[];
  /** Only these exact keys. */
  keys?: readonly string[];
  /** Include archived sessions (default false). */
  includeArchived?: boolean;
  /** At most this many rows (default: no limit). Applied after sorting. */
  limit?: number;
}

/** Filters for {@link Store.listRuns}. Sorted by `createdAt`, newest first. */
export interface RunListQuery {
  sessionKey?: string;
  spawnedBy?: string;
  statuses?: readonly RunStatus[];
  limit?: number;
}

/** Changes accepted by {@link Store.patchSession}; `null` clears an optional field. */
export type SessionPatch = {
  [K in Exclude<keyof SessionRecord, 'key'>]?: SessionRecord[K] | null;
};

/**
 * Durable state for Colloquy. Implementations: `MemoryStore` (core) and `SqliteStore`
 * (`@colloquy/store-sqlite`); both pass the conformance suite in `@colloquy/core/testing`.
 *
 * The interface is synchronous by design: both implementations are embedded, and a synchronous
 * `transaction` is atomic without locks (nothing else can interleave with it in this process).
 *
 * Every method throws `ColloquyError` (`STORE_ERROR`, `SESSION_NOT_FOUND`, ...) on failure.
 */
export interface Store {
  /**
   * Runs `fn` atomically: every write inside commits together or, if `fn` throws, none does
   * (the error is rethrown). Nested calls join the outer transaction.
   */
  transaction<T>(fn: () => T): T;

  // --- sessions ---
  getSession(key: string): SessionRecord | undefined;
  getSessionById(sessionId: string): SessionRecord | undefined;
  /** Finds sessions by exact label, optionally within one agent. */
  findSessionsByLabel(label: string, agentId?: string): SessionRecord[];
  /** Inserts or replaces the whole record. */
  putSession(record: SessionRecord): void;
  /** Merges `patch` into the record and returns it; `null` clears a field. @throws `SESSION_NOT_FOUND` */
  patchSession(key: string, patch: SessionPatch): SessionRecord;
  /** Deletes the session, its transcript, inbox, and thread bindings. Runs and outbox rows are kept. */
  deleteSession(key: string): boolean;
  /** Sessions matching `query`, newest `updatedAt` first (ties: key ascending). */
  listSessions(query?: SessionListQuery): SessionRecord[];
  /** How many sessions match `query`, ignoring `limit`. */
  countSessions(query?: SessionListQuery): number;

  // --- transcripts ---
  /** Appends in order and returns the stored messages with their `seq`. @throws `SESSION_NOT_FOUND` */
  appendMessages(sessionKey: string, messages: readonly TranscriptMessage[]): StoredMessage[];
  /** The last `limit` messages (ascending `seq`), optionally only those with `seq < beforeSeq`. O(limit). */
  readTail(sessionKey: string, limit: number, options?: { beforeSeq?: number }): StoredMessage[];
  countMessages(sessionKey: string): number;
  /**
   * Optional: records the platform message id on a delivered transcript message (by `seq`). The
   * runtime calls it right after a platform send when the store offers it (it records the id on
   * the run's `meta.delivery` either way).
   */
  setMessagePlatformId?(sessionKey: string, seq: number, platformMessageId: string): void;

  // --- runs ---
  createRun(run: RunRecord): void;
  getRun(runId: string): RunRecord | undefined;
  /** @throws `RUN_NOT_FOUND` */
  updateRun(runId: string, patch: Partial<Omit<RunRecord, 'runId'>>): RunRecord;
  listRuns(query?: RunListQuery): RunRecord[];

  // --- announce outbox ---
  /** Inserts unless `(childSessionKey, runId)` exists. Returns true when inserted. */
  putOutbox(entry: OutboxEntry): boolean;
  getOutbox(childSessionKey: string, runId: string): OutboxEntry | undefined;
  /** @throws `STORE_ERROR` when the row does not exist */
  updateOutbox(
    childSessionKey: string,
    runId: string,
    patch: Partial<Omit<OutboxEntry, 'childSessionKey' | 'runId'>>,
  ): OutboxEntry;
  /** Entries in these statuses (default `pending`) due at `dueBefore` (default: any), oldest first. */
  listOutbox(query?: {
    statuses?: readonly OutboxStatus[];
    requesterSessionKey?: string;
    dueBefore?: number;
    limit?: number;
  }): OutboxEntry[];

  // --- session inbox ---
  /** Insert-or-ignore on `(sessionKey, id)`. Returns true when inserted. */
  putInbox(entry: InboxEntry): boolean;
  /** Unconsumed entries of a session, oldest first. */
  listInbox(sessionKey: string): InboxEntry[];
  /** Marks entries consumed. */
  consumeInbox(sessionKey: string, ids: readonly string[], at: number): void;

  // --- thread bindings ---
  /** Inserts or replaces the binding for `(channel, accountId, threadId)`. */
  putThreadBinding(binding: ThreadBinding): void;
  getThreadBinding(channel: string, accountId: string, threadId: string): ThreadBinding | undefined;
  listThreadBindings(query?: { sessionKey?: string; channel?: string }): ThreadBinding[];
  deleteThreadBinding(channel: string, accountId: string, threadId: string): boolean;

  /** A best-effort locator for a session's transcript (e.g. `sqlite:/path/db#<sessionId>`). */
  transcriptLocator(session: SessionRecord): string | undefined;

  /**
   * Optional, for stores that acknowledge writes before they are durable (`SqliteStore` with group
   * commit): resolves once every write acknowledged before the call is durable, and rejects
   * (`STORE_ERROR`) when any of them was lost, so they must not be reported as done. A write is
   * durable once `flush` resolves. Stores without it (`MemoryStore`) have nothing to wait for;
   * callers use `await store.flush?.()`.
   */
  flush?(): Promise<void>;

  /** Releases resources. Further calls throw. */
  close(): void;
}
