import { closeSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import type { SessionRecord } from '@colloquy/core';
import { SerializedStore } from '@colloquy/core/store';
import type { BackgroundCheckpointer } from './background-checkpoint.js';
import type { GroupCommitSettings } from './group-commit.js';
import {
  type CheckpointResult,
  type IntegrityReport,
  SqliteEngine,
  type SqliteStoreInit,
  type SqliteSynchronous,
} from './sqlite-engine.js';

const EXPORT_BATCH = 500;

/**
 * The Colloquy Store on one SQLite file: sessions, transcripts, runs, the announce outbox and
 * inbox, thread bindings and pairings, in WAL mode with one writer. Open it with `openSqliteStore`.
 *
 * better-sqlite3 is synchronous; this class serialises every call and every transaction on the
 * one connection (see `SerializedStore` in `@colloquy/core`), so an open transaction is isolated
 * from other calls of this process, and `BEGIN IMMEDIATE` keeps other processes out.
 *
 * With group commit (`openSqliteStore({ groupCommit: true })`) many transactions share one SQLite
 * commit: each runs in a savepoint of a transaction that stays open until the end of the current
 * event-loop turn. A write is visible to this store at once and durable once `flush()`
 * resolves.
 */
export class SqliteStore extends SerializedStore {
  /** The absolute path of the store file (`:memory:` for an in-memory store). */
  readonly file: string;
  /** The schema version of the file, always `SQLITE_SCHEMA_VERSION` once opened. */
  readonly schemaVersion: number;
  /** True when opened with `readonly: true`; writes then reject with `STORE_ERROR`. */
  readonly readonly: boolean;
  /** The `synchronous` setting commits use. */
  readonly synchronous: SqliteSynchronous;
  /** Group commit settings (defaults applied), or `undefined` when every transaction commits alone. */
  readonly groupCommit: GroupCommitSettings | undefined;
  private readonly sqlite: SqliteEngine;
  private readonly checkpointer: BackgroundCheckpointer | undefined;

  /** @internal Use `openSqliteStore`, which opens, checks and migrates the file first. */
  constructor(init: SqliteStoreInit) {
    const engine = new SqliteEngine(init);
    super(engine, init.detectNestedCalls === undefined ? {} : { detectNestedCalls: init.detectNestedCalls });
    this.sqlite = engine;
    this.file = init.file;
    this.schemaVersion = init.schemaVersion;
    this.readonly = init.readonly;
    this.synchronous = init.synchronous;
    this.groupCommit = engine.groupCommit;
    this.checkpointer = init.checkpointer;
    this.checkpointer?.whenLogFull(() => this.startLogOver());
  }

  /** One at a time: the worker reports every `intervalMs`, and this waits behind open transactions. */
  private startingLogOver = false;

  /** Lets the log start over once the checkpoint worker copied most of it; see `BackgroundCheckpointer`. */
  private startLogOver(): void {
    if (this.startingLogOver) return;
    this.startingLogOver = true;
    this.run(() => this.sqlite.startLogOver())
      .catch(() => {
        // A closed store, or a commit that failed: the batch's waiters and the log have that error.
      })
      .finally(() => {
        this.startingLogOver = false;
      });
  }

  /**
   * Since when new writes are refused because the disk holding the file is full (epoch ms), or
   * undefined while writes are taken. Only a store opened with `diskSpace` refuses writes this way;
   * reads work meanwhile, and writes resume by themselves once the disk has room again.
   */
  get diskFullSince(): number | undefined {
    return this.sqlite.diskFullSince;
  }

  /**
   * Where this session's transcript lives: `sqlite:<file>#<sessionId>`.
   * `exportTranscriptJsonl` accepts it back.
   */
  transcriptLocator(session: SessionRecord): string {
    return this.sqlite.transcriptLocator(session);
  }

  /**
   * Resolves once every write acknowledged before the call is committed, as durable as
   * `synchronous` makes it. Without group commit every write commits before it resolves, so this
   * resolves at once. With group commit it waits for the open batch's commit (at the end of the
   * event-loop turn, or after `maxDelayMs`) without hurrying it, so concurrent callers share it.
   *
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
    return this.sqlite.flush();
  }

  /**
   * One session's transcript as JSON Lines: one stored message (with its `seq`) per line, oldest
   * first, each ending in `\n`. Lines are read in batches, so a long transcript never sits in
   * memory at once; pipe them anywhere with `Readable.from(...)`. Messages appended while the
   * export runs may or may not be included.
   *
   * @param ref - a session key, a `sessionId`, or a locator from `transcriptLocator`
   * @returns an async iterator over the lines
   * @throws `SESSION_NOT_FOUND` when no session matches `ref` (on the first read)
   * @example
   * ```ts
   * await pipeline(Readable.from(store.exportTranscriptJsonl('agent:main:main')), createWriteStream('main.jsonl'));
   * ```
   */
  async *exportTranscriptJsonl(ref: string): AsyncGenerator<string, void, undefined> {
    const key = await this.run(() => this.sqlite.resolveTranscriptRef(ref));
    let after = 0;
    for (;;) {
      const rows = await this.run(() => this.sqlite.transcriptBatch(key, after, EXPORT_BATCH));
      for (const row of rows) yield row.line;
      if (rows.length < EXPORT_BATCH) return;
      after = rows[rows.length - 1]!.seq;
    }
  }

  /**
   * Writes one session's transcript as a JSON Lines file (see `exportTranscriptJsonl`). The
   * file appears complete or not at all: it is written beside `path` and renamed into place.
   *
   * @param ref - a session key, a `sessionId`, or a transcript locator
   * @param path - the file to write (replaced if it exists)
   * @returns the number of messages written
   * @throws `SESSION_NOT_FOUND` when no session matches `ref`
   */
  async exportTranscriptJsonlToFile(ref: string, path: string): Promise<number> {
    const lines = this.exportTranscriptJsonl(ref);
    const temp = `${path}.${process.pid}.tmp`;
    const first = await lines.next();
    const fd = openSync(temp, 'w');
    let count = 0;
    try {
      let chunk: string[] = [];
      const write = () => {
        if (chunk.length > 0) writeSync(fd, chunk.join(''));
        chunk = [];
      };
      for (let next = first; !next.done; next = await lines.next()) {
        chunk.push(next.value);
        count += 1;
        if (chunk.length >= EXPORT_BATCH) write();
      }
      write();
      closeSync(fd);
      renameSync(temp, path);
    } catch (error) {
      try {
        closeSync(fd);
      } catch {
        // already closed
      }
      rmSync(temp, { force: true });
      throw error;
    }
    return count;
  }

  /**
   * Runs SQLite's full `PRAGMA integrity_check` plus a foreign-key check. Reads the whole file:
   * use it after a crash or in maintenance, not on every start.
   *
   * @returns `{ ok, problems }`
   */
  integrityCheck(): Promise<IntegrityReport> {
    return this.run(() => this.sqlite.integrityCheck());
  }

  /**
   * Copies the write-ahead log into the database file and truncates the log. SQLite does this on
   * its own every ~1000 pages; call it before copying the file elsewhere, or when the `-wal` file
   * grew while a long reader was open. With group commit, the open batch commits first.
   *
   * @returns how many frames there were and how many were copied
   */
  checkpoint(): Promise<CheckpointResult> {
    return this.run(() => this.sqlite.checkpoint());
  }

  /**
   * Stops the background checkpoint worker (when on), then closes the store: the connection is
   * then the file's last, so SQLite copies the log into the file as it closes.
   */
  override close(): Promise<void> {
    // Without a worker, close exactly as before (its first step runs at once).
    if (this.checkpointer === undefined) return super.close();
    return this.checkpointer.stop().then(() => super.close());
  }

  /** Closes the database connection (called once, after work in flight has settled). */
  protected closeEngine(): void {
    this.sqlite.close();
  }
}
