import type { Logger, SessionRecord, StoredMessage, ThreadBinding, TranscriptMessage } from '@colloquy/core';
import type { McpTokenRecord, PairingRecord, RunRecord } from '@colloquy/core/gateway';
import type {
  InboxEntry,
  McpTokenListQuery,
  MessageSearchQuery,
  MessageSearchResult,
  OutboxEntry,
  OutboxListQuery,
  PairingListQuery,
  RunListQuery,
  SessionChanges,
  SessionListQuery,
  SessionPatch,
  SessionWatch,
  SynchronousStoreEngine,
  SynchronousStoreOperations,
  SynchronousTurnOperations,
  TailOptions,
  WatchListQuery,
} from '@colloquy/core/store';
import { serializeRecord } from '@colloquy/core/store';
import type Database from 'better-sqlite3';
import type { BackgroundCheckpointer } from './background-checkpoint.js';
import { DiskSpaceGuard, type DiskSpaceSettings } from './disk-space.js';
import {
  consumeInbox,
  getOutbox,
  listInbox,
  listInboxSessionKeys,
  listOutbox,
  putInbox,
  putOutbox,
  updateOutbox,
} from './engine/announce.js';
import { DynamicStatements } from './engine/dynamic-statements.js';
import {
  type CheckpointResult,
  type IntegrityReport,
  integrityCheck,
  walCheckpoint,
} from './engine/maintenance.js';
import { getMcpTokenByHash, listMcpTokens, putMcpToken, revokeMcpToken } from './engine/mcp-tokens.js';
import { runSearch, searchReadonly } from './engine/message-search.js';
import { deletePairing, getPairing, listPairings, putPairing } from './engine/pairings.js';
import { createRun, getRun, listRuns, updateRun } from './engine/runs.js';
import {
  countSessions,
  deleteSession,
  getSession,
  listSessions,
  patchSession,
  putSession,
} from './engine/sessions.js';
import { prepareStatements, type Statements, type Stmt } from './engine/statements.js';
import {
  deleteThreadBinding,
  getThreadBinding,
  listThreadBindings,
  putThreadBinding,
} from './engine/thread-bindings.js';
import { Transactions } from './engine/transactions.js';
import {
  appendMessages,
  countMessages,
  readTail,
  resolveSessionRef,
  setMessagePlatformId,
  transcriptBatch,
  transcriptLocator,
} from './engine/transcripts.js';
import { commitInbound, endTurn, recordDeliveries } from './engine/turns.js';
import { deleteWatch, listWatches, putWatch, readChanges } from './engine/watches.js';
import type { GroupCommitSettings } from './group-commit.js';
import {
  CREATE_PENDING_INDEX_SQL,
  indexPendingSql,
  PENDING_INDEX,
  planMessageSearch,
} from './message-search-sql.js';
import { defineSearchWordsFunction } from './search-words-function.js';
import { sessionNotFound } from './sqlite-errors.js';

export type { CheckpointResult, IntegrityReport } from './engine/maintenance.js';

/** How hard a commit waits for the disk. See the package README for the trade-off. */
export type SqliteSynchronous = 'NORMAL' | 'FULL';

/** What {@link SqliteStore} needs from the opener; built by `openSqliteStore`. */
export interface SqliteStoreInit {
  db: Database.Database;
  file: string;
  readonly: boolean;
  synchronous: SqliteSynchronous;
  busyTimeoutMs: number;
  schemaVersion: number;
  logger: Logger;
  /** Group commit settings, or undefined for one commit per transaction. */
  groupCommit?: GroupCommitSettings;
  /** See `SqliteStoreOptions.detectNestedCalls`. */
  detectNestedCalls?: boolean;
  /** The worker that checkpoints, when `backgroundCheckpoint` is on; stopped before the file closes. */
  checkpointer?: BackgroundCheckpointer;
  /** `diskSpace` settings, when on: writes are refused while the disk is full, and resume by themselves. */
  diskSpace?: DiskSpaceSettings;
  /** Free bytes on the disk holding a directory (default `statfs`); tests give their own. */
  freeBytes?: (dir: string) => number;
}

/**
 * The synchronous engine under {@link SqliteStore}: every Store operation as one synchronous
 * better-sqlite3 call on one connection, plus begin/commit/rollback for the async transactions that
 * `SerializedStore` runs one at a time. Records are stored as JSON next to the indexed columns that
 * queries filter on; every read parses a fresh copy.
 *
 * With group commit many transactions share one SQLite commit: each runs in a savepoint of a
 * transaction that stays open until the end of the current event-loop turn (never while a
 * transaction is open: the batch then commits when it ends). A write is visible at once and
 * durable once `flush()` resolves.
 */
export class SqliteEngine implements SynchronousStoreEngine, SynchronousStoreOperations {
  /** The absolute path of the store file (`:memory:` for an in-memory store). */
  readonly file: string;
  /** The schema version of the file, always `SQLITE_SCHEMA_VERSION` once opened. */
  readonly schemaVersion: number;
  /** True when opened with `readonly: true`; writes then throw `STORE_ERROR`. */
  readonly readonly: boolean;
  /** The `synchronous` setting commits use. */
  readonly synchronous: SqliteSynchronous;
  /** Group commit settings (defaults applied), or `undefined` when every transaction commits alone. */
  readonly groupCommit: GroupCommitSettings | undefined;

  private readonly db: Database.Database;
  private readonly logger: Logger;
  /** The fixed statements, prepared once. */
  private readonly s: Statements;
  /** The statements whose SQL depends on a query's filters. */
  private readonly dynamic: DynamicStatements;
  /** Transactions, group commit and the error guard every call runs in. */
  private readonly tx: Transactions;
  /** A read-only store's statement filling its temporary index (see `searchReadonly`). */
  private readonly pendingIndex: Stmt<[]> | undefined;
  /** Watches the disk when `diskSpace` is on. */
  private readonly space: DiskSpaceGuard | undefined;

  /** Built by `openSqliteStore`, which opens, checks and migrates the file first. */
  constructor(init: SqliteStoreInit) {
    this.db = init.db;
    this.file = init.file;
    this.readonly = init.readonly;
    this.synchronous = init.synchronous;
    this.schemaVersion = init.schemaVersion;
    this.logger = init.logger;
    this.groupCommit = init.groupCommit;
    const db = this.db;
    defineSearchWordsFunction(db);
    this.s = prepareStatements(db, this.readonly);
    this.dynamic = new DynamicStatements(db);
    this.space =
      init.diskSpace === undefined
        ? undefined
        : new DiskSpaceGuard({
            file: this.file,
            settings: init.diskSpace,
            logger: this.logger,
            ...(init.freeBytes === undefined ? {} : { freeBytes: init.freeBytes }),
            onResume: () => this.tx.resume(),
          });
    this.tx = new Transactions({
      db,
      s: this.s,
      file: this.file,
      busyTimeoutMs: init.busyTimeoutMs,
      logger: this.logger,
      groupCommit: this.groupCommit,
      space: this.space,
    });
    if (this.readonly) {
      // Created here, outside any transaction, so that no rollback can take it away.
      db.exec(CREATE_PENDING_INDEX_SQL);
      this.pendingIndex = db.prepare(indexPendingSql(PENDING_INDEX));
    }
  }

  /**
   * Since when new writes are refused because the disk holding the file is full (epoch ms), or
   * undefined while writes are taken (always, without `diskSpace`).
   */
  get diskFullSince(): number | undefined {
    return this.space?.since;
  }

  // --- transactions (engine/transactions.ts) ---

  get operations(): SynchronousStoreOperations {
    return this;
  }

  /**
   * The turn operations, done natively (engine/turns.ts): each in one transaction of prepared
   * statements, or inside the open transaction when called on a transaction handle.
   */
  readonly turns: SynchronousTurnOperations = {
    commitInbound: (inbound) => this.tx.write(() => commitInbound(this.s, inbound)),
    endTurn: (end) => this.tx.write(() => endTurn(this.s, this.dynamic, end)),
    recordDeliveries: (records) => {
      if (records.length > 0) this.tx.write(() => recordDeliveries(this.s, records));
    },
  };

  /**
   * Opens a transaction: `BEGIN IMMEDIATE` (the write lock is taken up front, so a busy file fails
   * fast with `STORE_LOCKED` instead of half-way), or with group commit a savepoint of the open
   * batch.
   */
  begin(): void {
    this.tx.begin();
  }

  /** Commits the open transaction (with group commit: releases its savepoint into the batch). */
  commit(): void {
    this.tx.commit();
  }

  /** Rolls the open transaction back (with group commit: only its savepoint). */
  rollback(): void {
    this.tx.rollback();
  }

  /**
   * Resolves once every write acknowledged before the call is committed, as durable as
   * `synchronous` makes it. Without group commit every write commits before it returns, so this
   * resolves at once. With group commit it waits for the open batch's commit (at the end of the
   * event-loop turn, or after `maxDelayMs`); it does not hurry it, so concurrent callers still
   * share one commit.
   *
   * @returns a promise that resolves after the `COMMIT`
   * @throws (rejects) `STORE_ERROR` when that commit failed: the batch's writes were rolled back,
   *   and the store refuses writes until it is reopened (with `diskSpace`, a full disk's failure lasts until
   *   space returns: see `diskFullSince`). Also rejects after `close()`.
   * @example
   * ```ts
   * await store.transaction(async (tx) => { await tx.createRun(run); await tx.appendMessages(key, [input]); });
   * await store.flush(); // now the run survives a crash
   * ```
   */
  flush(): Promise<void> {
    return this.tx.flush();
  }

  // --- sessions (engine/sessions.ts) ---

  getSession(key: string): SessionRecord | undefined {
    return this.tx.guard(() => getSession(this.s, key));
  }

  putSession(record: SessionRecord): void {
    this.tx.write(() => putSession(this.s, record));
  }

  patchSession(key: string, patch: SessionPatch): SessionRecord {
    return this.tx.write(() => patchSession(this.s, key, patch));
  }

  deleteSession(key: string): boolean {
    return this.tx.write(() => deleteSession(this.s, key));
  }

  listSessions(query: SessionListQuery = {}): SessionRecord[] {
    return this.tx.guard(() => listSessions(this.dynamic, query));
  }

  countSessions(query: SessionListQuery = {}): number {
    return this.tx.guard(() => countSessions(this.dynamic, query));
  }

  // --- transcripts (engine/transcripts.ts, engine/message-search.ts) ---

  appendMessages(sessionKey: string, messages: readonly TranscriptMessage[]): StoredMessage[] {
    if (messages.length === 1 && this.tx.idle) return [this.appendOne(sessionKey, messages[0]!)];
    return this.tx.write(() => appendMessages(this.s, sessionKey, messages));
  }

  /**
   * The common case of one message outside a transaction: one autocommit statement finds the next
   * `seq`, checks the session exists and inserts, atomically, without BEGIN/COMMIT round trips.
   */
  private appendOne(sessionKey: string, message: TranscriptMessage): StoredMessage {
    const json = serializeRecord(message, 'transcript message');
    return this.tx.writeAlone(() => {
      const seq = this.s.appendOne.get({ key: sessionKey, json });
      if (seq === undefined) throw sessionNotFound(sessionKey);
      const stored = JSON.parse(json) as StoredMessage;
      stored.seq = seq;
      return stored;
    });
  }

  readTail(sessionKey: string, limit: number, options: TailOptions = {}): StoredMessage[] {
    return this.tx.guard(() => readTail(this.s, sessionKey, limit, options));
  }

  countMessages(sessionKey: string): number {
    return this.tx.guard(() => countMessages(this.s, sessionKey));
  }

  /**
   * Searches the full-text index after bringing it up to date: messages appended since the last
   * search (by any connection) are indexed first, in one write transaction (or the caller's), and
   * `search_state` moves to the newest `messages.id` in the same commit (see migration v5). So a
   * search sees every committed message, and inside a transaction also that transaction's own
   * appends; a rollback takes their index entries with it.
   *
   * Why not index in each append's own transaction (schema v4): FTS5 writes a new index segment
   * at every commit and merges segments as they pile up, which cost single-message appends two
   * thirds of their throughput; a batch pays that once, and only the tokenizing is left per
   * message. The catch-up computes the words of each message once (core's rule, through the
   * `colloquy_search_words` function and a materialized CTE) and feeds FTS5 in `rowid` order.
   */
  searchMessages(query: MessageSearchQuery): MessageSearchResult {
    const plan = planMessageSearch(query);
    if (plan === undefined) return { hits: [], total: 0 };
    if (this.readonly) {
      return this.tx.guard(() => searchReadonly(this.db, this.dynamic, this.pendingIndex!, query, plan));
    }
    // While the disk is full the index stays as it is: a search then misses the newest messages.
    if (!this.tx.diskFull && this.tx.guard(() => this.s.searchPending.get() === 1)) {
      this.tx.write(() => {
        this.s.searchCatchUp.run();
        this.s.searchMark.run();
        this.s.searchClearStale.run();
      });
    }
    return this.tx.guard(() => runSearch(this.dynamic, plan));
  }

  setMessagePlatformId(sessionKey: string, seq: number, platformMessageId: string): void {
    this.tx.write(() => setMessagePlatformId(this.s, sessionKey, seq, platformMessageId));
  }

  // --- runs (engine/runs.ts) ---

  createRun(run: RunRecord): void {
    this.tx.write(() => createRun(this.s, run));
  }

  getRun(runId: string): RunRecord | undefined {
    return this.tx.guard(() => getRun(this.s, runId));
  }

  updateRun(runId: string, patch: Partial<Omit<RunRecord, 'runId'>>): RunRecord {
    return this.tx.write(() => updateRun(this.s, this.dynamic, runId, patch));
  }

  listRuns(query: RunListQuery = {}): RunRecord[] {
    return this.tx.guard(() => listRuns(this.dynamic, query));
  }

  // --- announce outbox and session inbox (engine/announce.ts) ---

  putOutbox(entry: OutboxEntry): boolean {
    return this.tx.write(() => putOutbox(this.s, entry));
  }

  getOutbox(childSessionKey: string, runId: string): OutboxEntry | undefined {
    return this.tx.guard(() => getOutbox(this.s, childSessionKey, runId));
  }

  updateOutbox(
    childSessionKey: string,
    runId: string,
    patch: Partial<Omit<OutboxEntry, 'childSessionKey' | 'runId'>>,
  ): OutboxEntry {
    return this.tx.write(() => updateOutbox(this.s, childSessionKey, runId, patch));
  }

  listOutbox(query: OutboxListQuery = {}): OutboxEntry[] {
    return this.tx.guard(() => listOutbox(this.dynamic, query));
  }

  putInbox(entry: InboxEntry): boolean {
    return this.tx.write(() => putInbox(this.s, entry));
  }

  listInbox(sessionKey: string): InboxEntry[] {
    return this.tx.guard(() => listInbox(this.s, sessionKey));
  }

  listInboxSessionKeys(): string[] {
    return this.tx.guard(() => listInboxSessionKeys(this.s));
  }

  consumeInbox(sessionKey: string, ids: readonly string[], at: number): void {
    this.tx.write(() => consumeInbox(this.s, sessionKey, ids, at));
  }

  // --- watching (engine/watches.ts) ---

  readChanges(sessionKey: string, sinceVersion: number): SessionChanges | undefined {
    return this.tx.guard(() => readChanges(this.s, sessionKey, sinceVersion));
  }

  putWatch(watch: SessionWatch): void {
    this.tx.write(() => putWatch(this.s, watch));
  }

  listWatches(query: WatchListQuery = {}): SessionWatch[] {
    return this.tx.guard(() => listWatches(this.s, this.dynamic, query));
  }

  deleteWatch(watcherKey: string, targetKey: string, id?: string): boolean {
    return this.tx.write(() => deleteWatch(this.s, watcherKey, targetKey, id));
  }

  // --- thread bindings (engine/thread-bindings.ts) ---

  putThreadBinding(binding: ThreadBinding): void {
    this.tx.write(() => putThreadBinding(this.s, binding));
  }

  getThreadBinding(channel: string, accountId: string, threadId: string): ThreadBinding | undefined {
    return this.tx.guard(() => getThreadBinding(this.s, channel, accountId, threadId));
  }

  listThreadBindings(query: { sessionKey?: string; channel?: string } = {}): ThreadBinding[] {
    return this.tx.guard(() => listThreadBindings(this.dynamic, query));
  }

  deleteThreadBinding(channel: string, accountId: string, threadId: string): boolean {
    return this.tx.write(() => deleteThreadBinding(this.s, channel, accountId, threadId));
  }

  // --- pairing (engine/pairings.ts) ---

  putPairing(record: PairingRecord): void {
    this.tx.write(() => putPairing(this.s, record));
  }

  getPairing(channel: string, accountId: string, peerId: string): PairingRecord | undefined {
    return this.tx.guard(() => getPairing(this.s, channel, accountId, peerId));
  }

  listPairings(query: PairingListQuery): PairingRecord[] {
    return this.tx.guard(() => listPairings(this.dynamic, query));
  }

  deletePairing(channel: string, accountId: string, peerId: string): boolean {
    return this.tx.write(() => deletePairing(this.s, channel, accountId, peerId));
  }

  // --- MCP tokens (engine/mcp-tokens.ts) ---

  putMcpToken(record: McpTokenRecord): void {
    this.tx.write(() => putMcpToken(this.s, record));
  }

  getMcpTokenByHash(hash: string): McpTokenRecord | undefined {
    return this.tx.guard(() => getMcpTokenByHash(this.s, hash));
  }

  listMcpTokens(query?: McpTokenListQuery): McpTokenRecord[] {
    return this.tx.guard(() => listMcpTokens(this.dynamic, query));
  }

  revokeMcpToken(id: string, at: number): boolean {
    return this.tx.write(() => revokeMcpToken(this.s, id, at));
  }

  // --- locators and export (engine/transcripts.ts) ---

  /**
   * Where this session's transcript lives: `sqlite:<file>#<sessionId>`.
   * `exportTranscriptJsonl` accepts it back.
   */
  transcriptLocator(session: SessionRecord): string {
    return transcriptLocator(this.file, session);
  }

  /**
   * The session key a transcript reference names: a session key, a `sessionId`, or a locator.
   *
   * @throws `SESSION_NOT_FOUND` when no session matches; `INVALID_ARGUMENT` for another file's locator
   */
  resolveTranscriptRef(ref: string): string {
    return this.tx.guard(() => resolveSessionRef(this.s, this.file, ref));
  }

  /** Up to `limit` stored messages (as JSON lines) of a session with `seq > after`, in order. */
  transcriptBatch(sessionKey: string, after: number, limit: number): { seq: number; line: string }[] {
    return this.tx.guard(() => transcriptBatch(this.s, sessionKey, after, limit));
  }

  // --- maintenance (engine/maintenance.ts) ---

  /**
   * Runs SQLite's full `PRAGMA integrity_check` plus a foreign-key check. Reads the whole file:
   * use it after a crash or in maintenance, not on every start.
   *
   * @returns `{ ok, problems }`
   */
  integrityCheck(): IntegrityReport {
    return this.tx.guard(() => integrityCheck(this.db));
  }

  /**
   * Copies the write-ahead log into the database file and truncates the log. SQLite does this on
   * its own every ~1000 pages; call it before copying the file elsewhere, or when the `-wal` file
   * grew while a long reader was open. With group commit, the open batch commits first.
   *
   * @returns how many frames there were and how many were copied
   */
  checkpoint(): CheckpointResult {
    return this.tx.guard(() => {
      this.tx.commitBatch();
      return walCheckpoint(this.db, 'TRUNCATE');
    });
  }

  /**
   * Commits the open batch, then copies what the log holds beyond the background checkpointer's
   * last copy (PASSIVE: gives up at once if the worker is copying). When all of it is copied, the
   * next commit starts the log over from its beginning.
   */
  startLogOver(): CheckpointResult {
    return this.tx.guard(() => {
      this.tx.commitBatch();
      return walCheckpoint(this.db, 'PASSIVE');
    });
  }

  /**
   * Closes the file (running `PRAGMA optimize` first when writable). With group commit, the open
   * batch commits first and pending `flush()` calls settle. Closing twice is fine.
   *
   * @throws `STORE_ERROR` when the final group commit failed (the file is closed all the same)
   */
  close(): void {
    if (this.tx.closed) return;
    const failure = this.tx.close();
    this.dynamic.clear();
    try {
      if (!this.readonly && this.db.open) {
        // Never wait for another process's lock just to refresh statistics.
        this.db.pragma('busy_timeout = 0');
        this.db.pragma('optimize');
      }
    } catch (error) {
      this.logger.warn({ err: error, file: this.file }, 'PRAGMA optimize failed while closing the store');
    }
    this.db.close();
    if (failure !== undefined) throw failure;
  }
}
