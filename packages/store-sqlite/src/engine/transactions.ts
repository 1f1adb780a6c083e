import { ColloquyError, type Logger } from '@colloquy/core';
import type Database from 'better-sqlite3';
import type { DiskSpaceGuard } from '../disk-space.js';
import { CommitBatch, type GroupCommitSettings } from '../group-commit.js';
import { closedStoreError, sqliteCode, toStoreError } from '../sqlite-errors.js';
import type { Statements } from './statements.js';

/** What {@link Transactions} needs from the engine. */
export interface TransactionsInit {
  db: Database.Database;
  s: Statements;
  file: string;
  busyTimeoutMs: number;
  logger: Logger;
  /** Group commit settings, or undefined for one commit per transaction. */
  groupCommit: GroupCommitSettings | undefined;
  /** Refuses new transactions while the disk is full (`diskSpace` option), or undefined. */
  space: DiskSpaceGuard | undefined;
}

/**
 * The engine's transactions on its one connection: begin/commit/rollback of the async transactions
 * `SerializedStore` runs one at a time, the implicit transaction of a single-call write, the error
 * guard every call runs in, and group commit (many transactions in savepoints of one batch that
 * commits at the end of the event-loop turn; see {@link CommitBatch}).
 */
export class Transactions {
  private readonly db: Database.Database;
  private readonly s: Statements;
  private readonly file: string;
  private readonly busyTimeoutMs: number;
  private readonly logger: Logger;
  private readonly groupCommit: GroupCommitSettings | undefined;
  private readonly space: DiskSpaceGuard | undefined;
  private depth = 0;
  private isClosed = false;
  /** The open group-commit batch: a physical transaction holding the writes not yet committed. */
  private batch: CommitBatch | undefined;
  /** Set when a group commit failed: the store then refuses writes and every flush rejects with it. */
  private failure: ColloquyError | undefined;
  /** The failure is a full disk's: it ends when writes resume ({@link resume}). */
  private failureEndsWithDiskFull = false;
  /** The batch came due while a transaction was open: commit it when that transaction ends. */
  private commitWhenIdle = false;

  constructor(init: TransactionsInit) {
    this.db = init.db;
    this.s = init.s;
    this.file = init.file;
    this.busyTimeoutMs = init.busyTimeoutMs;
    this.logger = init.logger;
    this.groupCommit = init.groupCommit;
    this.space = init.space;
  }

  /** True when no transaction is open (a group-commit batch may be). */
  get idle(): boolean {
    return this.depth === 0;
  }

  /** True once {@link close} ran. */
  get closed(): boolean {
    return this.isClosed;
  }

  /**
   * Opens a transaction: `BEGIN IMMEDIATE` (the write lock is taken up front, so a busy file fails
   * fast with `STORE_LOCKED` instead of half-way), or with group commit a savepoint of the open
   * batch.
   */
  begin(): void {
    this.guard(() => {
      this.space?.assertWritable();
      if (this.groupCommit !== undefined) {
        this.joinBatch();
        this.s.savepoint.run();
      } else {
        this.s.begin.run();
      }
    });
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
      // Before the rollback: a batch SQLite undid on a full disk is then reported as such.
      this.noteDiskFull(error);
      this.rollback();
      throw error;
    }
    this.commit();
    return result;
  }

  /** Resolves once every write acknowledged before the call is committed; see `SqliteEngine.flush`. */
  flush(): Promise<void> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    if (this.isClosed) return Promise.reject(closedStoreError(this.file));
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
    if (this.batch !== batch || this.isClosed) return;
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
  commitBatch(): void {
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
    this.noteDiskFull(cause);
    const reason = toStoreError(cause, { file: this.file, busyTimeoutMs: this.busyTimeoutMs });
    if (lost === 0) {
      // Nothing acknowledged was lost: whoever waits has nothing of theirs in the batch.
      this.logger.warn({ err: reason, file: this.file }, 'an empty group-commit batch was rolled back');
      batch?.settle();
      return reason;
    }
    const diskFull = this.space?.since !== undefined;
    const failure = new ColloquyError(
      reason.code,
      `A group commit on ${this.file} failed (${reason.message}). The ${lost} transaction(s) written since the ` +
        'last commit were rolled back and never became durable. ' +
        (diskFull
          ? 'The store refuses writes until space is freed on its disk, then takes them again by itself.'
          : 'The store now refuses writes: fix the cause (disk space, permissions, the file), then close the ' +
            'store and open it again.'),
      { ...reason.details, ...(diskFull ? { reason: 'disk-full' } : {}), lostTransactions: lost },
      { cause },
    );
    if (this.failure === undefined) {
      this.failure = failure;
      this.failureEndsWithDiskFull = diskFull;
    }
    this.logger.error({ err: failure, file: this.file, lostTransactions: lost }, 'group commit failed');
    batch?.settle(failure);
    return failure;
  }

  /**
   * Runs one statement outside a transaction, in the guard: with group commit inside the open
   * batch (being one statement, it needs no savepoint) and counted as one of its transactions
   * unless `fn` throws.
   */
  writeAlone<T>(fn: () => T): T {
    return this.guard(() => {
      this.space?.assertWritable();
      if (this.groupCommit !== undefined) this.joinBatch();
      let result: T;
      try {
        result = fn();
      } catch (error) {
        if (this.batch !== undefined && !this.db.inTransaction) this.loseBatch(error);
        throw error;
      }
      if (this.groupCommit !== undefined) this.batchedWriteDone();
      return result;
    });
  }

  /**
   * Commits the open batch and marks the store closed; every later call throws `STORE_ERROR`.
   *
   * @returns the error of the final group commit, if it failed
   */
  close(): ColloquyError | undefined {
    this.space?.close();
    let failure: ColloquyError | undefined;
    try {
      this.commitBatch();
    } catch (error) {
      failure = toStoreError(error, { file: this.file, busyTimeoutMs: this.busyTimeoutMs });
    }
    this.isClosed = true;
    return failure;
  }

  /** Runs a write: inside the current transaction when there is one, else in its own. */
  write<T>(fn: () => T): T {
    return this.guard(() => this.transaction(fn));
  }

  /** Checks the store is open and maps whatever `fn` throws onto `ColloquyError`. */
  guard<T>(fn: () => T): T {
    this.assertOpen();
    try {
      return fn();
    } catch (error) {
      this.noteDiskFull(error);
      throw toStoreError(error, { file: this.file, busyTimeoutMs: this.busyTimeoutMs });
    }
  }

  /** True while new transactions are refused for lack of disk space. */
  get diskFull(): boolean {
    return this.space?.since !== undefined;
  }

  /**
   * Takes writes again once the disk has room (called by the {@link DiskSpaceGuard}): a batch the full
   * disk undid no longer fails flushes, since every flush called while writes were refused was told.
   */
  resume(): void {
    if (!this.failureEndsWithDiskFull) return;
    this.failure = undefined;
    this.failureEndsWithDiskFull = false;
  }

  /** SQLite found the disk full: the guard refuses new transactions from now on. */
  private noteDiskFull(error: unknown): void {
    if (sqliteCode(error) === 'SQLITE_FULL') this.space?.enterFull('SQLite reported the disk full');
  }

  private assertOpen(): void {
    if (this.isClosed) throw closedStoreError(this.file);
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
