import { basename } from 'node:path';
import {
  ColloquyError,
  changeWindowStart,
  type InboxEntry,
  isPatchChange,
  type Logger,
  type MessageSearchQuery,
  type MessageSearchResult,
  type OutboxEntry,
  type OutboxListQuery,
  type PairingListQuery,
  type PairingRecord,
  type RunListQuery,
  type RunRecord,
  type SessionChangeKind,
  type SessionChanges,
  type SessionListQuery,
  type SessionPatch,
  type SessionRecord,
  type SessionWatch,
  type StoredMessage,
  type SynchronousStoreEngine,
  type SynchronousStoreOperations,
  summarizeChanges,
  type TailOptions,
  type ThreadBinding,
  type TranscriptMessage,
  type WatchListQuery,
} from '@colloquy/core';
import type Database from 'better-sqlite3';
import { CommitBatch, type GroupCommitSettings } from './group-commit.js';
import {
  CREATE_PENDING_INDEX_SQL,
  indexPendingSql,
  MESSAGE_INDEX,
  type MessageSearchPlan,
  PENDING_INDEX,
  planMessageSearch,
} from './message-search-sql.js';
import { planSessionList, sqlLimit } from './session-list-plan.js';
import { sqliteCode, toStoreError } from './sqlite-errors.js';
import {
  formatTranscriptLocator,
  isTranscriptLocator,
  parseTranscriptLocator,
} from './transcript-locator.js';

/** How hard a commit waits for the disk. See the package README for the trade-off. */
export type SqliteSynchronous = 'NORMAL' | 'FULL';

/** The result of {@link SqliteStore.integrityCheck}. */
export interface IntegrityReport {
  /** True when SQLite found no problem in the file and no dangling transcript rows. */
  ok: boolean;
  /** What SQLite reported, one line per problem (empty when `ok`). */
  problems: string[];
}

/** The result of {@link SqliteStore.checkpoint}. */
export interface CheckpointResult {
  /** True when a reader kept the checkpoint from finishing (try again later). */
  busy: boolean;
  /** Frames in the write-ahead log before the checkpoint. */
  walFrames: number;
  /** Frames copied into the database file. */
  checkpointedFrames: number;
}

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
}

type Stmt<P extends unknown[], R = unknown> = Database.Statement<P, R>;

interface SessionRow {
  record: string;
}

const MAX_SEQ = Number.MAX_SAFE_INTEGER;
/** Session fields with a column of their own besides `updated_at` (see `writeSession`). */
const SESSION_COLUMN_FIELDS = new Set([
  'key',
  'sessionId',
  'agentId',
  'kind',
  'spawnedBy',
  'label',
  'archivedAt',
]);
const DYNAMIC_CACHE_LIMIT = 128;

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
  private readonly busyTimeoutMs: number;
  private readonly logger: Logger;
  private readonly dynamic = new Map<string, Stmt<unknown[]>>();
  private depth = 0;
  private closed = false;
  /** The open group-commit batch: a physical transaction holding the writes not yet committed. */
  private batch: CommitBatch | undefined;
  /** Set when a group commit failed: the store then refuses writes and every flush rejects with it. */
  private failure: ColloquyError | undefined;
  /** The batch came due while a transaction was open: commit it when that transaction ends. */
  private commitWhenIdle = false;
  /** A read-only store's statement filling its temporary index (see `searchReadonly`). */
  private readonly pendingIndex: Stmt<[]> | undefined;

  private readonly s: {
    begin: Stmt<[]>;
    commit: Stmt<[]>;
    rollback: Stmt<[]>;
    savepoint: Stmt<[]>;
    release: Stmt<[]>;
    rollbackToSavepoint: Stmt<[]>;
    sessionByKey: Stmt<[string], string>;
    sessionById: Stmt<[string], string>;
    sessionExists: Stmt<[string], number>;
    searchPending: Stmt<[], number>;
    searchCatchUp: Stmt<[]>;
    searchMark: Stmt<[]>;
    upsertSession: Stmt<unknown[]>;
    updateSessionRecord: Stmt<[number, string, string]>;
    deleteSession: Stmt<[string]>;
    deleteMessages: Stmt<[string]>;
    deleteInbox: Stmt<[string]>;
    deleteBindingsOfSession: Stmt<[string]>;
    lastSeq: Stmt<[string], number>;
    firstSeq: Stmt<[string], number>;
    insertMessage: Stmt<[string, number, string]>;
    appendOne: Stmt<[{ key: string; json: string }], number>;
    tail: Stmt<[string, number, number], string>;
    messagesAfter: Stmt<[string, number, number], { seq: number; message: string }>;
    insertRun: Stmt<unknown[]>;
    updateRun: Stmt<unknown[]>;
    updateRunStatus: Stmt<[string, string, string]>;
    updateRunRecord: Stmt<[string, string]>;
    runById: Stmt<[string], string>;
    insertOutbox: Stmt<unknown[]>;
    updateOutbox: Stmt<unknown[]>;
    outboxById: Stmt<[string, string], string>;
    insertInbox: Stmt<unknown[]>;
    inboxOf: Stmt<[string], string>;
    consumeInbox: Stmt<[number, number, string, string]>;
    upsertBinding: Stmt<unknown[]>;
    bindingById: Stmt<[string, string, string], string>;
    deleteBinding: Stmt<[string, string, string]>;
    upsertPairing: Stmt<unknown[]>;
    pairingById: Stmt<[string, string, string], string>;
    deletePairing: Stmt<[string, string, string]>;
    setPlatformId: Stmt<[string, string, number]>;
    bumpVersion: Stmt<[string], number>;
    insertChange: Stmt<[string, number, SessionChangeKind]>;
    stateVersionOf: Stmt<[string], number>;
    changeCountsAfter: Stmt<[string, number], [SessionChangeKind, number]>;
    deleteChanges: Stmt<[string]>;
    deleteWatchesOf: Stmt<[string, string]>;
    upsertWatch: Stmt<[string, string, number, string, number]>;
    deleteWatch: Stmt<[string, string]>;
    deleteWatchWithId: Stmt<[string, string, string]>;
    targetWatched: Stmt<[string], number>;
  };

  /** Built by `openSqliteStore`, which opens, checks and migrates the file first. */
  constructor(init: SqliteStoreInit) {
    this.db = init.db;
    this.file = init.file;
    this.readonly = init.readonly;
    this.synchronous = init.synchronous;
    this.busyTimeoutMs = init.busyTimeoutMs;
    this.schemaVersion = init.schemaVersion;
    this.logger = init.logger;
    this.groupCommit = init.groupCommit;
    const db = this.db;
    const one = <P extends unknown[], R>(sql: string) => db.prepare<P, R>(sql).pluck();
    this.s = {
      begin: db.prepare(this.readonly ? 'BEGIN' : 'BEGIN IMMEDIATE'),
      commit: db.prepare('COMMIT'),
      rollback: db.prepare('ROLLBACK'),
      savepoint: db.prepare('SAVEPOINT colloquy_transaction'),
      release: db.prepare('RELEASE colloquy_transaction'),
      rollbackToSavepoint: db.prepare('ROLLBACK TO colloquy_transaction'),
      sessionByKey: one('SELECT record FROM sessions WHERE key = ?'),
      sessionById: one('SELECT record FROM sessions WHERE session_id = ?'),
      sessionExists: one('SELECT 1 FROM sessions WHERE key = ?'),
      searchPending: one(
        'SELECT (SELECT coalesce(max(id), 0) FROM messages) > (SELECT indexed_up_to FROM search_state)',
      ),
      searchCatchUp: db.prepare(indexPendingSql(MESSAGE_INDEX)),
      searchMark: db.prepare(
        'UPDATE search_state SET indexed_up_to = (SELECT coalesce(max(id), 0) FROM messages)',
      ),
      // The state version is the store's: a write keeps the stored one (in the column and the record).
      upsertSession: db.prepare(
        `INSERT INTO sessions (key, session_id, agent_id, kind, updated_at, spawned_by, label, archived_at, record)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, json_remove(?, '$.stateVersion'))
         ON CONFLICT (key) DO UPDATE SET session_id = excluded.session_id, agent_id = excluded.agent_id,
           kind = excluded.kind, updated_at = excluded.updated_at, spawned_by = excluded.spawned_by,
           label = excluded.label, archived_at = excluded.archived_at,
           record = CASE WHEN sessions.state_version > 0
             THEN json_set(excluded.record, '$.stateVersion', sessions.state_version) ELSE excluded.record END`,
      ),
      // A patch that leaves the other columns alone: no insert attempt and no unchanged index rewritten.
      // The record read in the same write transaction already mirrors the state version.
      updateSessionRecord: db.prepare('UPDATE sessions SET updated_at = ?, record = ? WHERE key = ?'),
      deleteSession: db.prepare('DELETE FROM sessions WHERE key = ?'),
      deleteMessages: db.prepare('DELETE FROM messages WHERE session_key = ?'),
      deleteInbox: db.prepare('DELETE FROM inbox WHERE session_key = ?'),
      deleteBindingsOfSession: db.prepare('DELETE FROM thread_bindings WHERE session_key = ?'),
      lastSeq: one('SELECT seq FROM messages WHERE session_key = ? ORDER BY seq DESC LIMIT 1'),
      firstSeq: one('SELECT seq FROM messages WHERE session_key = ? ORDER BY seq ASC LIMIT 1'),
      insertMessage: db.prepare('INSERT INTO messages (session_key, seq, message) VALUES (?, ?, ?)'),
      appendOne: one(
        `INSERT INTO messages (session_key, seq, message)
         SELECT @key, next.seq, json_set(@json, '$.seq', next.seq)
         FROM (SELECT coalesce((SELECT seq FROM messages WHERE session_key = @key ORDER BY seq DESC LIMIT 1), 0) + 1 AS seq) AS next
         WHERE EXISTS (SELECT 1 FROM sessions WHERE key = @key)
         RETURNING seq`,
      ),
      tail: one('SELECT message FROM messages WHERE session_key = ? AND seq < ? ORDER BY seq DESC LIMIT ?'),
      messagesAfter: db.prepare(
        'SELECT seq, message FROM messages WHERE session_key = ? AND seq > ? ORDER BY seq LIMIT ?',
      ),
      insertRun: db.prepare(
        `INSERT INTO runs (run_id, session_key, spawned_by, status, created_at, record) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (run_id) DO NOTHING`,
      ),
      updateRun: db.prepare(
        'UPDATE runs SET session_key = ?, spawned_by = ?, status = ?, created_at = ?, record = ? WHERE run_id = ?',
      ),
      // SQLite rewrites every index on a column an UPDATE sets, changed or not: the common updates
      // set only what changed (a status change touches one index, a record-only change none).
      updateRunStatus: db.prepare('UPDATE runs SET status = ?, record = ? WHERE run_id = ?'),
      updateRunRecord: db.prepare('UPDATE runs SET record = ? WHERE run_id = ?'),
      runById: one('SELECT record FROM runs WHERE run_id = ?'),
      insertOutbox: db.prepare(
        `INSERT INTO outbox (child_session_key, run_id, requester_session_key, status, next_attempt_at, created_at, entry)
         VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (child_session_key, run_id) DO NOTHING`,
      ),
      updateOutbox: db.prepare(
        `UPDATE outbox SET requester_session_key = ?, status = ?, next_attempt_at = ?, created_at = ?, entry = ?
         WHERE child_session_key = ? AND run_id = ?`,
      ),
      outboxById: one('SELECT entry FROM outbox WHERE child_session_key = ? AND run_id = ?'),
      insertInbox: db.prepare(
        `INSERT INTO inbox (session_key, id, created_at, consumed_at, entry) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (session_key, id) DO NOTHING`,
      ),
      inboxOf: one(
        'SELECT entry FROM inbox WHERE session_key = ? AND consumed_at IS NULL ORDER BY created_at, rowid',
      ),
      consumeInbox: db.prepare(
        `UPDATE inbox SET consumed_at = ?, entry = json_set(entry, '$.consumedAt', ?)
         WHERE session_key = ? AND id = ? AND consumed_at IS NULL`,
      ),
      upsertBinding: db.prepare(
        `INSERT INTO thread_bindings (channel, account_id, thread_id, session_key, binding) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (channel, account_id, thread_id) DO UPDATE SET
           session_key = excluded.session_key, binding = excluded.binding`,
      ),
      bindingById: one(
        'SELECT binding FROM thread_bindings WHERE channel = ? AND account_id = ? AND thread_id = ?',
      ),
      deleteBinding: db.prepare(
        'DELETE FROM thread_bindings WHERE channel = ? AND account_id = ? AND thread_id = ?',
      ),
      upsertPairing: db.prepare(
        `INSERT INTO pairings (channel, account_id, peer_id, status, code, created_at, record)
         VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (channel, account_id, peer_id) DO UPDATE SET status = excluded.status,
           code = excluded.code, created_at = excluded.created_at, record = excluded.record`,
      ),
      pairingById: one('SELECT record FROM pairings WHERE channel = ? AND account_id = ? AND peer_id = ?'),
      deletePairing: db.prepare('DELETE FROM pairings WHERE channel = ? AND account_id = ? AND peer_id = ?'),
      setPlatformId: db.prepare(
        `UPDATE messages SET message = json_set(message, '$.platformMessageId', ?)
         WHERE session_key = ? AND seq = ?`,
      ),
      // Messages and run starts/ends bump the version in triggers (migration v6); patches here.
      bumpVersion: one(
        `UPDATE sessions SET state_version = state_version + 1,
           record = json_set(record, '$.stateVersion', state_version + 1)
         WHERE key = ? RETURNING state_version`,
      ),
      insertChange: db.prepare('INSERT INTO session_changes (session_key, version, kind) VALUES (?, ?, ?)'),
      stateVersionOf: one('SELECT state_version FROM sessions WHERE key = ?'),
      changeCountsAfter: db
        .prepare<[string, number], [SessionChangeKind, number]>(
          'SELECT kind, count(*) FROM session_changes WHERE session_key = ? AND version > ? GROUP BY kind',
        )
        .raw(),
      deleteChanges: db.prepare('DELETE FROM session_changes WHERE session_key = ?'),
      deleteWatchesOf: db.prepare('DELETE FROM session_watches WHERE watcher_key = ? OR target_key = ?'),
      targetWatched: one('SELECT 1 FROM session_watches WHERE target_key = ? LIMIT 1'),
      upsertWatch: db.prepare(
        `INSERT INTO session_watches (watcher_key, target_key, after_version, id, created_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (watcher_key, target_key) DO UPDATE SET after_version = excluded.after_version,
           id = excluded.id, created_at = excluded.created_at`,
      ),
      deleteWatch: db.prepare('DELETE FROM session_watches WHERE watcher_key = ? AND target_key = ?'),
      deleteWatchWithId: db.prepare(
        'DELETE FROM session_watches WHERE watcher_key = ? AND target_key = ? AND id = ?',
      ),
    };
    if (this.readonly) {
      // Created here, outside any transaction, so that no rollback can take it away.
      db.exec(CREATE_PENDING_INDEX_SQL);
      this.pendingIndex = db.prepare(indexPendingSql(PENDING_INDEX));
    }
  }

  // --- transactions ---

  get operations(): SynchronousStoreOperations {
    return this;
  }

  /**
   * Opens a transaction: `BEGIN IMMEDIATE` (the write lock is taken up front, so a busy file fails
   * fast with `STORE_LOCKED` instead of half-way), or with group commit a savepoint of the open
   * batch.
   */
  begin(): void {
    this.assertOpen();
    if (this.groupCommit !== undefined) {
      this.guard(() => {
        this.joinBatch();
        this.s.savepoint.run();
      });
    } else {
      this.guard(() => this.s.begin.run());
    }
    this.depth = 1;
  }

  /** Commits the open transaction (with group commit: releases its savepoint into the batch). */
  commit(): void {
    this.depth = 0;
    if (this.groupCommit !== undefined) {
      this.guard(() => {
        try {
          // The transaction may have caught an error after which SQLite dropped the whole batch.
          this.assertTransactionAlive();
          this.s.release.run();
        } catch (error) {
          this.rollbackQuietly();
          throw this.loseBatch(error);
        }
      });
      this.batchedWriteDone();
      this.commitIfDue();
      return;
    }
    this.guard(() => {
      try {
        this.assertTransactionAlive();
        this.s.commit.run();
      } catch (error) {
        this.rollbackQuietly();
        throw error;
      }
    });
  }

  /** Rolls the open transaction back (with group commit: only its savepoint). */
  rollback(): void {
    this.depth = 0;
    if (this.groupCommit !== undefined) {
      this.rollbackSavepoint(new Error('the transaction was rolled back'));
      this.commitIfDue();
      return;
    }
    this.rollbackQuietly();
  }

  /**
   * Runs `fn` synchronously in a transaction, or inside the open one: the single-call writes use
   * it so that a multi-row write is atomic.
   */
  private transaction<T>(fn: () => T): T {
    if (this.depth > 0) {
      this.assertTransactionAlive();
      return fn();
    }
    this.begin();
    let result: T;
    try {
      result = fn();
    } catch (error) {
      this.rollback();
      throw error;
    }
    this.commit();
    return result;
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
   *   and the store refuses writes until it is reopened. Also rejects after `close()`.
   * @example
   * ```ts
   * await store.transaction(async (tx) => { await tx.createRun(run); await tx.appendMessages(key, [input]); });
   * await store.flush(); // now the run survives a crash
   * ```
   */
  flush(): Promise<void> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    if (this.closed) return Promise.reject(closedStoreError(this.file));
    return this.batch?.committed() ?? Promise.resolve();
  }

  /** Opens a batch (`BEGIN IMMEDIATE` and a scheduled commit) unless one is open. */
  private joinBatch(): void {
    if (this.failure !== undefined) throw this.failure;
    if (this.batch !== undefined) {
      if (this.db.inTransaction) return;
      throw this.loseBatch(new Error('SQLite rolled the open batch back after an earlier error'));
    }
    this.guard(() => this.s.begin.run());
    this.batch = new CommitBatch(this.groupCommit!, (batch) => this.commitDue(batch));
  }

  /** Counts a finished logical transaction; commits at once when the batch is full. */
  private batchedWriteDone(): void {
    const batch = this.batch!;
    batch.transactions += 1;
    if (batch.transactions >= this.groupCommit!.maxTransactions) this.commitBatch();
  }

  /** The batch's delay has passed. A failure is already with the waiters, the log and `failure`. */
  private commitDue(batch: CommitBatch): void {
    if (this.batch !== batch || this.closed) return;
    if (this.depth > 0) {
      this.commitWhenIdle = true;
      return;
    }
    try {
      this.commitBatch();
    } catch {
      // reported by loseBatch
    }
  }

  /** Commits a batch that came due while a transaction was open. */
  private commitIfDue(): void {
    if (!this.commitWhenIdle) return;
    this.commitWhenIdle = false;
    if (this.batch !== undefined) this.commitDue(this.batch);
  }

  /**
   * Commits the open batch and resolves its waiters.
   *
   * @throws the batch failure (see {@link loseBatch}) when the commit fails
   */
  private commitBatch(): void {
    const batch = this.batch;
    if (batch === undefined) return;
    this.batch = undefined;
    try {
      if (!this.db.inTransaction) throw new Error('SQLite rolled the open batch back after an earlier error');
      this.s.commit.run();
    } catch (error) {
      this.rollbackQuietly();
      throw this.loseBatch(error, batch);
    }
    batch.settle();
  }

  /** Undoes one logical transaction of a batch: its savepoint only, unless SQLite dropped them all. */
  private rollbackSavepoint(cause: unknown): void {
    if (!this.db.inTransaction) {
      this.loseBatch(cause);
      return;
    }
    try {
      this.s.rollbackToSavepoint.run();
      this.s.release.run();
    } catch (error) {
      this.rollbackQuietly();
      this.loseBatch(error);
    }
  }

  /**
   * Records that the open batch is gone (its commit failed, or SQLite rolled it back): rejects
   * every flush waiting for it, logs, and makes the store refuse writes from now on, so no later
   * flush can report the lost writes as durable. A batch that held no finished transaction loses
   * nothing anyone was told about, and leaves the store usable.
   *
   * @returns the error the waiters got
   */
  private loseBatch(cause: unknown, batch = this.batch): ColloquyError {
    if (batch === this.batch) this.batch = undefined;
    const lost = batch?.transactions ?? 0;
    const reason = toStoreError(cause, { file: this.file, busyTimeoutMs: this.busyTimeoutMs });
    if (lost === 0) {
      // Nothing acknowledged was lost: whoever waits has nothing of theirs in the batch.
      this.logger.warn({ err: reason, file: this.file }, 'an empty group-commit batch was rolled back');
      batch?.settle();
      return reason;
    }
    const failure = new ColloquyError(
      reason.code,
      `A group commit on ${this.file} failed (${reason.message}). The ${lost} transaction(s) written since the ` +
        'last commit were rolled back and never became durable. The store now refuses writes: fix the cause ' +
        '(disk space, permissions, the file), then close the store and open it again.',
      { ...reason.details, lostTransactions: lost },
      { cause },
    );
    this.failure ??= failure;
    this.logger.error({ err: failure, file: this.file, lostTransactions: lost }, 'group commit failed');
    batch?.settle(failure);
    return failure;
  }

  // --- sessions ---

  getSession(key: string): SessionRecord | undefined {
    return this.guard(() => parseOptional<SessionRecord>(this.s.sessionByKey.get(key)));
  }

  putSession(record: SessionRecord): void {
    this.write(() => {
      const previous = parseOptional<SessionRecord>(this.s.sessionByKey.get(record.key));
      this.writeSession(record, serialize(record, 'session'));
      if (isPatchChange(previous, record)) this.notePatch(record.key);
    });
  }

  patchSession(key: string, patch: SessionPatch): SessionRecord {
    return this.write(() => {
      const previous = this.s.sessionByKey.get(key);
      if (previous === undefined) throw sessionNotFound(key);
      const next = JSON.parse(previous) as Record<string, unknown>;
      for (const [field, value] of Object.entries(patch)) {
        if (field === 'key' || field === 'stateVersion' || value === undefined) continue;
        if (value === null) delete next[field];
        else next[field] = value;
      }
      const json = serialize(next, 'session');
      if (
        typeof next.updatedAt !== 'number' ||
        Object.keys(patch).some((f) => SESSION_COLUMN_FIELDS.has(f))
      ) {
        this.writeSession(next as unknown as SessionRecord, json);
      } else this.s.updateSessionRecord.run(next.updatedAt as number, json, key);
      if (!isPatchChange(JSON.parse(previous) as SessionRecord, next as unknown as SessionRecord)) {
        return JSON.parse(json) as SessionRecord;
      }
      this.notePatch(key);
      return JSON.parse(this.s.sessionByKey.get(key)!) as SessionRecord;
    });
  }

  /** Counts a `patch` change: bumps the version and logs its kind (the prune trigger bounds the log). */
  private notePatch(key: string): void {
    const version = this.s.bumpVersion.get(key);
    if (version !== undefined) this.s.insertChange.run(key, version, 'patch');
  }

  deleteSession(key: string): boolean {
    return this.write(() => {
      if (this.s.sessionExists.get(key) === undefined) return false;
      this.s.deleteMessages.run(key);
      this.s.deleteInbox.run(key);
      this.s.deleteBindingsOfSession.run(key);
      this.s.deleteChanges.run(key);
      this.s.deleteWatchesOf.run(key, key);
      this.s.deleteSession.run(key);
      return true;
    });
  }

  listSessions(query: SessionListQuery = {}): SessionRecord[] {
    return this.guard(() => {
      const [part] = planSessionList(query, 'rows', query.now ?? Date.now()).parts;
      if (part === undefined) return [];
      const rows = this.dynamicStatement(part.sql).all(...part.params) as SessionRow[];
      return rows.map((row) => JSON.parse(row.record) as SessionRecord);
    });
  }

  countSessions(query: SessionListQuery = {}): number {
    return this.guard(() => {
      const plan = planSessionList(query, 'count', query.now ?? Date.now());
      let total = 0;
      for (const part of plan.parts) {
        total += this.dynamicStatement(part.sql)
          .pluck()
          .get(...part.params) as number;
      }
      return total;
    });
  }

  // --- transcripts ---

  appendMessages(sessionKey: string, messages: readonly TranscriptMessage[]): StoredMessage[] {
    if (messages.length === 1 && this.depth === 0) return [this.appendOne(sessionKey, messages[0]!)];
    return this.write(() => {
      if (this.s.sessionExists.get(sessionKey) === undefined) throw sessionNotFound(sessionKey);
      let seq = this.s.lastSeq.get(sessionKey) ?? 0;
      const rows = messages.map((message) => {
        seq += 1;
        return { seq, json: serialize({ ...message, seq }, 'transcript message') };
      });
      for (const row of rows) this.s.insertMessage.run(sessionKey, row.seq, row.json);
      return rows.map((row) => JSON.parse(row.json) as StoredMessage);
    });
  }

  /**
   * The common case of one message outside a transaction: one autocommit statement finds the next
   * `seq`, checks the session exists and inserts, atomically, without BEGIN/COMMIT round trips.
   */
  private appendOne(sessionKey: string, message: TranscriptMessage): StoredMessage {
    const json = serialize(message, 'transcript message');
    return this.guard(() => {
      // With group commit the statement runs in the batch; being one statement, it needs no savepoint.
      if (this.groupCommit !== undefined) this.joinBatch();
      let seq: number | undefined;
      try {
        seq = this.s.appendOne.get({ key: sessionKey, json });
      } catch (error) {
        if (this.batch !== undefined && !this.db.inTransaction) this.loseBatch(error);
        throw error;
      }
      if (seq === undefined) throw sessionNotFound(sessionKey);
      if (this.groupCommit !== undefined) this.batchedWriteDone();
      const stored = JSON.parse(json) as StoredMessage;
      stored.seq = seq;
      return stored;
    });
  }

  /**
   * The tail walks the `(session_key, seq)` index back from a bound. An `offset` moves the bound
   * instead of skipping rows: a session's seqs are contiguous, so the newest `offset` messages
   * below `beforeSeq` are exactly those from `min(beforeSeq, last + 1) - offset` up, and a page
   * deep in a long transcript costs what the first page costs.
   */
  readTail(sessionKey: string, limit: number, options: TailOptions = {}): StoredMessage[] {
    return this.guard(() => {
      const count = sqlLimit(limit);
      if (count === 0) return [];
      let bound = options.beforeSeq ?? MAX_SEQ;
      const offset = options.offset !== undefined && options.offset > 0 ? Math.floor(options.offset) : 0;
      if (offset > 0) {
        const last = this.s.lastSeq.get(sessionKey);
        if (last === undefined) return [];
        bound = Math.min(bound, last + 1) - offset;
      }
      const rows = this.s.tail.all(sessionKey, bound, count);
      const out = new Array<StoredMessage>(rows.length);
      for (let i = 0; i < rows.length; i++) out[rows.length - 1 - i] = JSON.parse(rows[i]!) as StoredMessage;
      return out;
    });
  }

  /**
   * The number of messages in a session's transcript, in O(log n): the store only appends and only
   * deletes whole transcripts, so a session's `seq` values are contiguous.
   */
  countMessages(sessionKey: string): number {
    return this.guard(() => {
      const last = this.s.lastSeq.get(sessionKey);
      if (last === undefined) return 0;
      return last - (this.s.firstSeq.get(sessionKey) ?? last) + 1;
    });
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
   * message. The catch-up evaluates the text of each message once (`indexedTextSql`, through a
   * materialized CTE) and feeds FTS5 in `rowid` order.
   */
  searchMessages(query: MessageSearchQuery): MessageSearchResult {
    const plan = planMessageSearch(query);
    if (plan === undefined) return { hits: [], total: 0 };
    if (this.readonly) return this.searchReadonly(query, plan);
    if (this.guard(() => this.s.searchPending.get() === 1)) {
      this.write(() => {
        this.s.searchCatchUp.run();
        this.s.searchMark.run();
      });
    }
    return this.guard(() => this.runSearch(plan));
  }

  /**
   * A read-only connection cannot bring the file's index up to date, so within one read
   * transaction (one snapshot) it indexes what the file's index lacks into a temporary index,
   * searches both, and rolls the temporary entries back. Ranks of those messages come from the
   * small temporary index, so they compare only roughly with the others'.
   */
  private searchReadonly(query: MessageSearchQuery, plan: MessageSearchPlan): MessageSearchResult {
    return this.guard(() => {
      const pendingIndex = this.pendingIndex!;
      const nested = this.db.inTransaction;
      this.db.exec(nested ? 'SAVEPOINT colloquy_search' : 'BEGIN');
      try {
        if (pendingIndex.run().changes === 0) return this.runSearch(plan);
        return this.runSearch(planMessageSearch(query, [MESSAGE_INDEX, PENDING_INDEX])!);
      } finally {
        if (this.db.inTransaction) {
          this.db.exec(nested ? 'ROLLBACK TO colloquy_search; RELEASE colloquy_search' : 'ROLLBACK');
        }
      }
    });
  }

  private runSearch(plan: MessageSearchPlan): MessageSearchResult {
    const total = this.dynamicStatement(plan.count.sql)
      .pluck()
      .get(...plan.count.params) as number;
    if (plan.hits === undefined || total === 0) return { hits: [], total };
    const rows = this.dynamicStatement(plan.hits.sql).all(...plan.hits.params) as {
      sessionKey: string;
      message: string;
    }[];
    return {
      hits: rows.map((row) => ({
        sessionKey: row.sessionKey,
        message: JSON.parse(row.message) as StoredMessage,
      })),
      total,
    };
  }

  setMessagePlatformId(sessionKey: string, seq: number, platformMessageId: string): void {
    this.write(() => {
      this.s.setPlatformId.run(platformMessageId, sessionKey, seq);
    });
  }

  // --- runs ---

  createRun(run: RunRecord): void {
    this.write(() => {
      const inserted = this.s.insertRun.run(...runParams(run, serialize(run, 'run'))).changes > 0;
      if (!inserted) {
        throw new ColloquyError('CONFLICT', `Run "${run.runId}" already exists; run ids must be unique.`, {
          runId: run.runId,
        });
      }
    });
  }

  getRun(runId: string): RunRecord | undefined {
    return this.guard(() => parseOptional<RunRecord>(this.s.runById.get(runId)));
  }

  updateRun(runId: string, patch: Partial<Omit<RunRecord, 'runId'>>): RunRecord {
    return this.write(() => {
      const previous = this.s.runById.get(runId);
      if (previous === undefined) throw new ColloquyError('RUN_NOT_FOUND', `No run "${runId}".`, { runId });
      const before = JSON.parse(previous) as RunRecord;
      const next: RunRecord = { ...before, ...withoutUndefined(patch), runId };
      const json = serialize(next, 'run');
      if (
        next.sessionKey !== before.sessionKey ||
        (next.spawnedBy ?? null) !== (before.spawnedBy ?? null) ||
        next.createdAt !== before.createdAt
      ) {
        const [, ...columns] = runParams(next, json);
        this.s.updateRun.run(...columns, runId);
      } else if (next.status !== before.status) this.s.updateRunStatus.run(next.status, json, runId);
      else this.s.updateRunRecord.run(json, runId);
      return JSON.parse(json) as RunRecord;
    });
  }

  listRuns(query: RunListQuery = {}): RunRecord[] {
    return this.guard(() => {
      if (query.statuses?.length === 0) return [];
      const limit = sqlLimit(query.limit);
      if (limit === 0) return [];
      const filters: string[] = [];
      const params: unknown[] = [];
      if (query.sessionKey !== undefined) {
        filters.push('session_key = ?');
        params.push(query.sessionKey);
      }
      if (query.spawnedBy !== undefined) {
        filters.push('spawned_by = ?');
        params.push(query.spawnedBy);
      }
      if (query.statuses !== undefined) {
        filters.push('status IN (SELECT value FROM json_each(?))');
        params.push(JSON.stringify(query.statuses));
      }
      const sql = `SELECT record FROM runs${whereClause(filters)} ORDER BY created_at DESC, run_id DESC LIMIT ?`;
      return this.dynamicStatement(sql)
        .pluck()
        .all(...params, limit)
        .map((json) => JSON.parse(json as string) as RunRecord);
    });
  }

  // --- announce outbox ---

  putOutbox(entry: OutboxEntry): boolean {
    return this.write(
      () => this.s.insertOutbox.run(...outboxParams(entry, serialize(entry, 'outbox entry'))).changes > 0,
    );
  }

  getOutbox(childSessionKey: string, runId: string): OutboxEntry | undefined {
    return this.guard(() => parseOptional<OutboxEntry>(this.s.outboxById.get(childSessionKey, runId)));
  }

  updateOutbox(
    childSessionKey: string,
    runId: string,
    patch: Partial<Omit<OutboxEntry, 'childSessionKey' | 'runId'>>,
  ): OutboxEntry {
    return this.write(() => {
      const previous = this.s.outboxById.get(childSessionKey, runId);
      if (previous === undefined) {
        throw new ColloquyError(
          'STORE_ERROR',
          `No outbox entry for run "${runId}" of "${childSessionKey}".`,
          { childSessionKey, runId },
        );
      }
      const next: OutboxEntry = {
        ...(JSON.parse(previous) as OutboxEntry),
        ...withoutUndefined(patch),
        childSessionKey,
        runId,
      };
      const json = serialize(next, 'outbox entry');
      const [, , ...columns] = outboxParams(next, json);
      this.s.updateOutbox.run(...columns, childSessionKey, runId);
      return JSON.parse(json) as OutboxEntry;
    });
  }

  listOutbox(query: OutboxListQuery = {}): OutboxEntry[] {
    return this.guard(() => {
      const statuses = query.statuses ?? ['pending'];
      const limit = sqlLimit(query.limit);
      if (statuses.length === 0 || limit === 0) return [];
      const filters = ['status IN (SELECT value FROM json_each(?))'];
      const params: unknown[] = [JSON.stringify(statuses)];
      if (query.requesterSessionKey !== undefined) {
        filters.push('requester_session_key = ?');
        params.push(query.requesterSessionKey);
      }
      if (query.dueBefore !== undefined) {
        filters.push('next_attempt_at <= ?');
        params.push(query.dueBefore);
      }
      const sql = `SELECT entry FROM outbox${whereClause(filters)} ORDER BY created_at, rowid LIMIT ?`;
      return this.dynamicStatement(sql)
        .pluck()
        .all(...params, limit)
        .map((json) => JSON.parse(json as string) as OutboxEntry);
    });
  }

  // --- watching ---

  readChanges(sessionKey: string, sinceVersion: number): SessionChanges | undefined {
    return this.guard(() => {
      const toVersion = this.s.stateVersionOf.get(sessionKey);
      if (toVersion === undefined) return undefined;
      const from = changeWindowStart(sinceVersion, toVersion);
      return summarizeChanges(sinceVersion, toVersion, this.s.changeCountsAfter.all(sessionKey, from));
    });
  }

  putWatch(watch: SessionWatch): void {
    this.write(() => {
      this.s.upsertWatch.run(
        watch.watcherKey,
        watch.targetKey,
        watch.afterVersion,
        watch.id,
        watch.createdAt,
      );
    });
  }

  listWatches(query: WatchListQuery = {}): SessionWatch[] {
    return this.guard(() => {
      const limit = sqlLimit(query.limit);
      if (limit === 0) return [];
      // The check after every turn: one index probe answers "no watch on this session" without the
      // join and the sort.
      if (query.targetKey !== undefined && this.s.targetWatched.get(query.targetKey) === undefined) return [];
      const filters: string[] = [];
      const params: unknown[] = [];
      if (query.watcherKey !== undefined) {
        filters.push('w.watcher_key = ?');
        params.push(query.watcherKey);
      }
      if (query.targetKey !== undefined) {
        filters.push('w.target_key = ?');
        params.push(query.targetKey);
      }
      if (query.due) filters.push('s.state_version > w.after_version');
      const join = query.due ? ' JOIN sessions s ON s.key = w.target_key' : '';
      const sql =
        'SELECT w.watcher_key AS watcherKey, w.target_key AS targetKey, w.after_version AS afterVersion, ' +
        `w.id AS id, w.created_at AS createdAt FROM session_watches w${join}${whereClause(filters)} ` +
        'ORDER BY w.created_at, w.rowid LIMIT ?';
      return this.dynamicStatement(sql).all(...params, limit) as SessionWatch[];
    });
  }

  deleteWatch(watcherKey: string, targetKey: string, id?: string): boolean {
    return this.write(
      () =>
        (id === undefined
          ? this.s.deleteWatch.run(watcherKey, targetKey)
          : this.s.deleteWatchWithId.run(watcherKey, targetKey, id)
        ).changes > 0,
    );
  }

  // --- session inbox ---

  putInbox(entry: InboxEntry): boolean {
    return this.write(
      () =>
        this.s.insertInbox.run(
          entry.sessionKey,
          entry.id,
          entry.createdAt,
          entry.consumedAt ?? null,
          serialize(entry, 'inbox entry'),
        ).changes > 0,
    );
  }

  listInbox(sessionKey: string): InboxEntry[] {
    return this.guard(() => this.s.inboxOf.all(sessionKey).map((json) => JSON.parse(json) as InboxEntry));
  }

  consumeInbox(sessionKey: string, ids: readonly string[], at: number): void {
    this.write(() => {
      for (const id of ids) this.s.consumeInbox.run(at, at, sessionKey, id);
    });
  }

  // --- thread bindings ---

  putThreadBinding(binding: ThreadBinding): void {
    this.write(() => {
      this.s.upsertBinding.run(
        binding.channel,
        binding.accountId,
        binding.threadId,
        binding.sessionKey,
        serialize(binding, 'thread binding'),
      );
    });
  }

  getThreadBinding(channel: string, accountId: string, threadId: string): ThreadBinding | undefined {
    return this.guard(() =>
      parseOptional<ThreadBinding>(this.s.bindingById.get(channel, accountId, threadId)),
    );
  }

  listThreadBindings(query: { sessionKey?: string; channel?: string } = {}): ThreadBinding[] {
    return this.guard(() => {
      const filters: string[] = [];
      const params: unknown[] = [];
      if (query.sessionKey !== undefined) {
        filters.push('session_key = ?');
        params.push(query.sessionKey);
      }
      if (query.channel !== undefined) {
        filters.push('channel = ?');
        params.push(query.channel);
      }
      const sql = `SELECT binding FROM thread_bindings${whereClause(filters)} ORDER BY rowid`;
      return this.dynamicStatement(sql)
        .pluck()
        .all(...params)
        .map((json) => JSON.parse(json as string) as ThreadBinding);
    });
  }

  deleteThreadBinding(channel: string, accountId: string, threadId: string): boolean {
    return this.write(() => this.s.deleteBinding.run(channel, accountId, threadId).changes > 0);
  }

  // --- pairing ---

  putPairing(record: PairingRecord): void {
    this.write(() => {
      try {
        this.s.upsertPairing.run(
          record.channel,
          record.accountId,
          record.peerId,
          record.status,
          record.status === 'pending' ? (record.code ?? null) : null,
          record.createdAt,
          serialize(record, 'pairing'),
        );
      } catch (error) {
        if (sqliteCode(error) === 'SQLITE_CONSTRAINT_UNIQUE') {
          throw new ColloquyError(
            'CONFLICT',
            `The ${record.channel} pairing code "${record.code}" is already pending for another peer; issue a new code.`,
            { channel: record.channel, code: record.code },
            { cause: error },
          );
        }
        throw error;
      }
    });
  }

  getPairing(channel: string, accountId: string, peerId: string): PairingRecord | undefined {
    return this.guard(() => parseOptional<PairingRecord>(this.s.pairingById.get(channel, accountId, peerId)));
  }

  listPairings(query: PairingListQuery): PairingRecord[] {
    return this.guard(() => {
      const filters = ['channel = ?'];
      const params: unknown[] = [query.channel];
      if (query.accountId !== undefined) {
        filters.push('account_id = ?');
        params.push(query.accountId);
      }
      if (query.status !== undefined) {
        filters.push('status = ?');
        params.push(query.status);
      }
      if (query.code !== undefined) {
        filters.push("status = 'pending' AND code = ?");
        params.push(query.code);
      }
      const sql = `SELECT record FROM pairings${whereClause(filters)} ORDER BY created_at, rowid`;
      return this.dynamicStatement(sql)
        .pluck()
        .all(...params)
        .map((json) => JSON.parse(json as string) as PairingRecord);
    });
  }

  deletePairing(channel: string, accountId: string, peerId: string): boolean {
    return this.write(() => this.s.deletePairing.run(channel, accountId, peerId).changes > 0);
  }

  // --- locators and export ---

  /**
   * Where this session's transcript lives: `sqlite:<file>#<sessionId>`.
   * `exportTranscriptJsonl` accepts it back.
   */
  transcriptLocator(session: SessionRecord): string {
    // The file's name, not its path: a locator is shown to models and chats, and the database
    // lives in the state directory it is relative to.
    return formatTranscriptLocator(basename(this.file), session.sessionId);
  }

  /**
   * The session key a transcript reference names: a session key, a `sessionId`, or a locator.
   *
   * @throws `SESSION_NOT_FOUND` when no session matches; `INVALID_ARGUMENT` for another file's locator
   */
  resolveTranscriptRef(ref: string): string {
    return this.guard(() => this.resolveSessionRef(ref));
  }

  /** Up to `limit` stored messages (as JSON lines) of a session with `seq > after`, in order. */
  transcriptBatch(sessionKey: string, after: number, limit: number): { seq: number; line: string }[] {
    return this.guard(() =>
      this.s.messagesAfter
        .all(sessionKey, after, limit)
        .map((row) => ({ seq: row.seq, line: `${row.message}\n` })),
    );
  }

  // --- maintenance ---

  /**
   * Runs SQLite's full `PRAGMA integrity_check` plus a foreign-key check. Reads the whole file:
   * use it after a crash or in maintenance, not on every start.
   *
   * @returns `{ ok, problems }`
   */
  integrityCheck(): IntegrityReport {
    return this.guard(() => {
      const problems = (this.db.pragma('integrity_check') as { integrity_check: string }[])
        .map((row) => row.integrity_check)
        .filter((line) => line !== 'ok');
      for (const row of this.db.pragma('foreign_key_check') as { table: string; rowid: number | null }[]) {
        problems.push(`foreign key violation in ${row.table} (rowid ${String(row.rowid)})`);
      }
      return { ok: problems.length === 0, problems };
    });
  }

  /**
   * Copies the write-ahead log into the database file and truncates the log. SQLite does this on
   * its own every ~1000 pages; call it before copying the file elsewhere, or when the `-wal` file
   * grew while a long reader was open. With group commit, the open batch commits first.
   *
   * @returns how many frames there were and how many were copied
   */
  checkpoint(): CheckpointResult {
    return this.guard(() => {
      this.commitBatch();
      const [row] = this.db.pragma('wal_checkpoint(TRUNCATE)') as {
        busy: number;
        log: number;
        checkpointed: number;
      }[];
      return { busy: row?.busy === 1, walFrames: row?.log ?? 0, checkpointedFrames: row?.checkpointed ?? 0 };
    });
  }

  /**
   * Closes the file (running `PRAGMA optimize` first when writable). With group commit, the open
   * batch commits first and pending `flush()` calls settle. Closing twice is fine.
   *
   * @throws `STORE_ERROR` when the final group commit failed (the file is closed all the same)
   */
  close(): void {
    if (this.closed) return;
    let failure: ColloquyError | undefined;
    try {
      this.commitBatch();
    } catch (error) {
      failure = toStoreError(error, { file: this.file, busyTimeoutMs: this.busyTimeoutMs });
    }
    this.closed = true;
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

  // --- internals ---

  private resolveSessionRef(ref: string): string {
    if (this.s.sessionExists.get(ref) !== undefined) return ref;
    let sessionId = ref;
    if (isTranscriptLocator(ref)) {
      const located = parseTranscriptLocator(ref);
      if (located.file !== this.file && located.file !== basename(this.file)) {
        throw new ColloquyError(
          'INVALID_ARGUMENT',
          `The locator ${ref} points at ${located.file}, not at this store (${this.file}); open that file instead.`,
          { locator: ref, file: this.file },
        );
      }
      sessionId = located.sessionId;
    }
    const record = parseOptional<SessionRecord>(this.s.sessionById.get(sessionId));
    if (record === undefined) {
      throw new ColloquyError(
        'SESSION_NOT_FOUND',
        `No session "${ref}" in ${this.file}: pass a session key, a sessionId or a transcript locator.`,
        { ref, file: this.file },
      );
    }
    return record.key;
  }

  private writeSession(record: SessionRecord, json: string): void {
    try {
      this.s.upsertSession.run(
        record.key,
        record.sessionId,
        record.agentId,
        record.kind,
        record.updatedAt,
        record.spawnedBy ?? null,
        record.label ?? null,
        record.archivedAt ?? null,
        json,
      );
    } catch (error) {
      if (sqliteCode(error) === 'SQLITE_CONSTRAINT_UNIQUE') {
        throw new ColloquyError(
          'CONFLICT',
          `Session id "${record.sessionId}" already belongs to another session; give "${record.key}" a fresh sessionId.`,
          { key: record.key, sessionId: record.sessionId },
          { cause: error },
        );
      }
      throw error;
    }
  }

  private dynamicStatement(sql: string): Stmt<unknown[]> {
    let statement = this.dynamic.get(sql);
    if (statement === undefined) {
      if (this.dynamic.size >= DYNAMIC_CACHE_LIMIT) this.dynamic.clear();
      statement = this.db.prepare<unknown[]>(sql);
      this.dynamic.set(sql, statement);
    }
    // A cached statement may have been switched to pluck mode by another caller.
    return statement.pluck(false);
  }

  /** Runs a write: inside the current transaction when there is one, else in its own. */
  private write<T>(fn: () => T): T {
    return this.guard(() => this.transaction(fn));
  }

  /** Checks the store is open and maps whatever `fn` throws onto `ColloquyError`. */
  private guard<T>(fn: () => T): T {
    this.assertOpen();
    try {
      return fn();
    } catch (error) {
      throw toStoreError(error, { file: this.file, busyTimeoutMs: this.busyTimeoutMs });
    }
  }

  private assertOpen(): void {
    if (this.closed) throw closedStoreError(this.file);
  }

  /** SQLite rolls a whole transaction back on some errors (disk full, I/O); later writes must not autocommit. */
  private assertTransactionAlive(): void {
    if (!this.db.inTransaction) {
      throw new ColloquyError(
        'STORE_ERROR',
        `SQLite rolled back the current transaction on ${this.file} after an earlier error; ` +
          'let that error leave Store.transaction and retry the whole transaction.',
        { file: this.file },
      );
    }
  }

  private rollbackQuietly(): void {
    if (!this.db.inTransaction) return;
    try {
      this.s.rollback.run();
    } catch (error) {
      this.logger.error({ err: error, file: this.file }, 'rollback failed');
    }
  }
}

function closedStoreError(file: string): ColloquyError {
  return new ColloquyError(
    'STORE_ERROR',
    `The store ${file} is closed; open it again with openSqliteStore.`,
    {
      file,
    },
  );
}

function sessionNotFound(key: string): ColloquyError {
  return new ColloquyError('SESSION_NOT_FOUND', `No session "${key}".`, { key });
}

function parseOptional<T>(json: string | undefined): T | undefined {
  return json === undefined ? undefined : (JSON.parse(json) as T);
}

function serialize(value: unknown, what: string): string {
  try {
    return JSON.stringify(value);
  } catch (error) {
    throw new ColloquyError(
      'INVALID_ARGUMENT',
      `The ${what} cannot be stored because it is not JSON-serialisable (${(error as Error).message}); ` +
        'keep records to plain objects, arrays, strings, numbers and booleans.',
      {},
      { cause: error },
    );
  }
}

function runParams(run: RunRecord, json: string): unknown[] {
  return [run.runId, run.sessionKey, run.spawnedBy ?? null, run.status, run.createdAt, json];
}

function outboxParams(entry: OutboxEntry, json: string): unknown[] {
  return [
    entry.childSessionKey,
    entry.runId,
    entry.requesterSessionKey,
    entry.status,
    entry.nextAttemptAt,
    entry.createdAt,
    json,
  ];
}

function whereClause(filters: readonly string[]): string {
  return filters.length > 0 ? ` WHERE ${filters.join(' AND ')}` : '';
}

function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
