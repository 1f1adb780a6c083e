import {
  ColloquyError,
  type SessionRecord,
  type StoredMessage,
  type ThreadBinding,
  type TranscriptMessage,
} from '@colloquy/core';
import type { McpTokenRecord, PairingRecord, RunRecord, RunStatus } from '@colloquy/core/gateway';
import {
  type DeliveryRecord,
  type InboundCommit,
  type InboundCommitResult,
  type InboxEntry,
  isPatchChange,
  type McpTokenListQuery,
  type MessageSearchQuery,
  type MessageSearchResult,
  mcpTokenRow,
  type OutboxEntry,
  type OutboxListQuery,
  outboxRow,
  type PairingListQuery,
  pairingRow,
  type RunListQuery,
  rowTurnOperations,
  SESSION_CHANGE_WINDOW,
  type SessionChangeKind,
  type SessionChanges,
  type SessionListQuery,
  type SessionPatch,
  type SessionWatch,
  type StoreTransaction,
  serializeRecord,
  sessionRow,
  storedRun,
  summarizeChanges,
  type TailOptions,
  type TurnEnd,
  type TurnEndResult,
  type WatchListQuery,
} from '@colloquy/core/store';
import type { QueryResultRow } from 'pg';
import { messageSearchSql } from './message-search-sql.js';
import * as batchStatements from './pg-batch-reads.js';
import { isConnectionError, pgCode } from './pg-errors.js';
import * as turnStatements from './pg-turn-operations.js';
import {
  INSERT_RUN,
  RUN_READ_COLUMNS,
  type RunRow,
  runFromRow,
  runUpdate,
  runValues,
} from './run-columns.js';
import { searchVector } from './search-vector.js';
import { sessionListSql, sqlLimit } from './session-list-sql.js';

/** Something that runs a query: the pool, or the client of an open transaction. */
export interface Queryable {
  query<R extends QueryResultRow = QueryResultRow>(
    text: string,
    values?: unknown[],
  ): Promise<{ rows: R[]; rowCount: number | null }>;
}

/** How {@link PgOperations} reaches the database. */
export interface PgConnection {
  /** Runs one statement. */
  query: Queryable['query'];
  /**
   * Runs `work` atomically: inside the open transaction when there is one, else in a new one.
   * Used by operations that read and then write (patches), or write several rows.
   */
  atomic<T>(work: (q: Queryable) => Promise<T>): Promise<T>;
  /** Throws when the handle must not be used now (closed store, finished transaction, ...). */
  assertUsable(): void;
  /** Maps a driver error onto `ColloquyError`. */
  fail(error: unknown): ColloquyError;
  /**
   * True on the pool, where a read that met a dead pooled connection (the server restarted, the
   * network dropped) can run again on a fresh one. Never inside a transaction.
   */
  readonly retryReads: boolean;
}

type Row = { record: unknown };

/** The statuses `runs_active` (schema 4) holds, and its condition as written there. */
const ACTIVE_STATUSES: ReadonlySet<RunStatus> = new Set<RunStatus>(['queued', 'running']);
const ACTIVE_RUNS = "status IN ('queued', 'running')";

/** A session row as read: the record (without `stateVersion`) and the version column (a bigint as text). */
type SessionRow = { record: SessionRecord; state_version: string };

/**
 * The session a row holds, with its `stateVersion` from the column (absent while 0, as a session that
 * never changed has none).
 */
function sessionFromRow(row: SessionRow | undefined): SessionRecord | undefined {
  if (row === undefined) return undefined;
  const version = Number(row.state_version);
  return version > 0 ? { ...row.record, stateVersion: version } : row.record;
}

/** A transcript row as read: the message, its seq (a bigint as text) and its platform id column. */
export type MessageRow = { seq: string; message: TranscriptMessage; platform_message_id: string | null };

/** The message a row holds; its platform id column, once set, overrides the one in the JSON. */
export function storedMessage(row: MessageRow): StoredMessage {
  const message: StoredMessage = { ...row.message, seq: Number(row.seq) };
  if (row.platform_message_id !== null) message.platformMessageId = row.platform_message_id;
  return message;
}

/** Counts a `patch` change of the session: bumps its version and logs the change (schema v4). */
async function notePatch(q: Queryable, key: string): Promise<void> {
  await q.query(`SELECT colloquy_note_change($1, 'patch', 1)`, [key]);
}

/** What a session write sets when the row exists: every column of `sessionRow`. */
const SESSION_ON_CONFLICT = `ON CONFLICT (key) DO UPDATE SET session_id = excluded.session_id,
  agent_id = excluded.agent_id, kind = excluded.kind, updated_at = excluded.updated_at,
  spawned_by = excluded.spawned_by, label = excluded.label, archived_at = excluded.archived_at,
  record = excluded.record`;
const SESSION_COLUMNS = 'key, session_id, agent_id, kind, updated_at, spawned_by, label, archived_at, record';

/** Inserts or overwrites a session row. */
const UPSERT_SESSION = `INSERT INTO sessions (${SESSION_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
  ${SESSION_ON_CONFLICT}`;

/**
 * The same, returning the record the row held before. `previous` is read (and its row locked) before
 * the upsert, which waits for it through its WHERE: read after, it would no longer see the row this
 * statement replaced.
 */
const REPLACE_SESSION = `WITH previous AS MATERIALIZED (SELECT record FROM sessions WHERE key = $1 FOR UPDATE),
  written AS (
    INSERT INTO sessions (${SESSION_COLUMNS})
    SELECT $1::text, $2::text, $3::text, $4::text, $5::bigint, $6::text, $7::text, $8::bigint, $9::json
      WHERE (SELECT count(*) FROM previous) >= 0
    ${SESSION_ON_CONFLICT}
    RETURNING xmax::text <> '0' AS updated
  )
  SELECT (SELECT record FROM previous) AS previous, (SELECT updated FROM written) AS updated`;

/** How many times a read meets a dead pooled connection before its error is reported. */
const READ_ATTEMPTS = 4;

/**
 * The Store operations as SQL, over a {@link PgConnection}: the store's pool (each call on its
 * own, multi-row writes in their own transaction) or one open transaction.
 */
export class PgOperations implements StoreTransaction {
  constructor(protected readonly db: PgConnection) {}

  /** Joins the open transaction, or (on the store) opens one: see `PostgresStore.transaction`. */
  transaction<T>(fn: (tx: StoreTransaction) => Promise<T>): Promise<T> {
    return this.run(() => fn(this));
  }

  /**
   * Runs one SQL statement on this handle's connection: inside the open transaction for a `tx`,
   * else on a pooled connection. For packages that keep their own tables in the same database and
   * must write in the same transaction as the store, such as `@colloquy/cluster` adding a run's job.
   * Values are bound as parameters (`$1`, `$2`, ...), never spliced into the text.
   *
   * @param text - the statement
   * @param values - its parameters
   * @returns the rows it returned
   * @throws `STORE_ERROR` when the statement fails
   */
  sql<R extends QueryResultRow = QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> {
    return this.run(async () => (await this.db.query<R>(text, values)).rows);
  }

  // --- sessions ---

  getSession(key: string): Promise<SessionRecord | undefined> {
    return this.read(async () =>
      sessionFromRow(
        (await this.db.query<SessionRow>('SELECT record, state_version FROM sessions WHERE key = $1', [key]))
          .rows[0],
      ),
    );
  }

  putSession(record: SessionRecord): Promise<void> {
    return this.run(() =>
      this.db.atomic(async (q) => {
        const { previous, updated } = await this.replaceSession(q, record);
        // A session written over by another instance since this statement's snapshot has no
        // previous record to compare: its watchers are told of a change rather than left waiting.
        if (previous === null ? updated : isPatchChange(previous, record)) await notePatch(q, record.key);
      }),
    );
  }

  patchSession(key: string, patch: SessionPatch): Promise<SessionRecord> {
    return this.run(() =>
      this.db.atomic(async (q) => {
        const current = sessionFromRow(
          (
            await q.query<SessionRow>(
              'SELECT record, state_version FROM sessions WHERE key = $1 FOR UPDATE',
              [key],
            )
          ).rows[0],
        );
        if (!current) throw sessionNotFound(key);
        const next: Record<string, unknown> = { ...current };
        for (const [field, value] of Object.entries(patch)) {
          if (field === 'key' || field === 'stateVersion' || value === undefined) continue;
          if (value === null) delete next[field];
          else next[field] = value;
        }
        const record = next as unknown as SessionRecord;
        await this.writeSession(q, record);
        if (isPatchChange(current, record, Object.keys(patch))) {
          await notePatch(q, key);
          // The row is locked, so the bump is exactly this one.
          record.stateVersion = (current.stateVersion ?? 0) + 1;
        }
        return clone(record);
      }),
    );
  }

  deleteSession(key: string): Promise<boolean> {
    return this.run(() =>
      this.db.atomic(async (q) => {
        const deleted = await q.query('DELETE FROM sessions WHERE key = $1', [key]);
        if (!deleted.rowCount) return false;
        await q.query('DELETE FROM messages WHERE session_key = $1', [key]);
        await q.query('DELETE FROM inbox WHERE session_key = $1', [key]);
        await q.query('DELETE FROM thread_bindings WHERE session_key = $1', [key]);
        await q.query('DELETE FROM session_changes WHERE session_key = $1', [key]);
        await q.query('DELETE FROM session_watches WHERE watcher_key = $1 OR target_key = $1', [key]);
        return true;
      }),
    );
  }

  listSessions(query: SessionListQuery = {}): Promise<SessionRecord[]> {
    return this.read(async () => {
      const sql = sessionListSql(query, 'rows', query.now ?? Date.now());
      if (!sql) return [];
      return (await this.db.query<SessionRow>(sql.text, sql.values)).rows.map(
        (row) => sessionFromRow(row) as SessionRecord,
      );
    });
  }

  countSessions(query: SessionListQuery = {}): Promise<number> {
    return this.read(async () => {
      const sql = sessionListSql(query, 'count', query.now ?? Date.now());
      if (!sql) return 0;
      const result = await this.db.query<{ count: string }>(sql.text, sql.values);
      return Number(result.rows[0]?.count ?? 0);
    });
  }

  // --- transcripts ---

  appendMessages(sessionKey: string, messages: readonly TranscriptMessage[]): Promise<StoredMessage[]> {
    return this.run(async () => {
      if (messages.length === 0) {
        if (!(await this.getSession(sessionKey))) throw sessionNotFound(sessionKey);
        return [];
      }
      const json = messages.map((m) => serializeRecord(m, 'transcript message'));
      // One statement: takes the session's next seq numbers under its row lock, counts the appended
      // messages as changes of its state version, and inserts them with their search entries.
      const result = await this.db.query<{ seq: string }>(
        `WITH s AS (
           UPDATE sessions SET next_seq = next_seq + $3, state_version = state_version + $3
             WHERE key = $1 RETURNING next_seq - $3 AS first
         )
         INSERT INTO messages (session_key, seq, message, search)
         SELECT $1, s.first + m.i - 1, m.message, m.search
           FROM s, unnest($2::json[], $4::tsvector[]) WITH ORDINALITY AS m(message, search, i)
         RETURNING seq`,
        [sessionKey, json, messages.length, messages.map(searchVector)],
      );
      if (result.rows.length === 0) throw sessionNotFound(sessionKey);
      const seqs = result.rows.map((row) => Number(row.seq)).sort((a, b) => a - b);
      return json.map((text, i) => ({ ...(JSON.parse(text) as TranscriptMessage), seq: seqs[i]! }));
    });
  }

  /**
   * Walks the primary key back from a bound. An `offset` moves the bound instead of skipping rows
   * (a session's seqs are contiguous), in the same statement, so a deep page costs what the first
   * page costs.
   */
  readTail(sessionKey: string, limit: number, options: TailOptions = {}): Promise<StoredMessage[]> {
    return this.read(async () => {
      const count = sqlLimit(limit);
      if (count === 0) return [];
      const offset = options.offset !== undefined && options.offset > 0 ? Math.floor(options.offset) : 0;
      const values: unknown[] = [
        sessionKey,
        options.beforeSeq ?? Number.MAX_SAFE_INTEGER,
        offset,
        options.afterSeq ?? Number.MIN_SAFE_INTEGER,
      ];
      const bound =
        offset === 0
          ? '$2'
          : '(SELECT least($2::bigint, max(seq) + 1) - $3::bigint FROM messages WHERE session_key = $1)';
      if (count > 0) values.push(count);
      const result = await this.db.query<MessageRow>(
        `SELECT seq, message, platform_message_id FROM messages
         WHERE session_key = $1 AND seq < ${bound} AND seq > $4::bigint AND $3::bigint >= 0
         ORDER BY seq DESC ${count < 0 ? '' : 'LIMIT $5'}`,
        values,
      );
      return result.rows.reverse().map(storedMessage);
    });
  }

  countMessages(sessionKey: string): Promise<number> {
    // Seqs of a session are contiguous (transcripts are only appended to, and deleted whole).
    return this.read(async () => {
      const result = await this.db.query<{ low: string | null; high: string | null }>(
        'SELECT min(seq) AS low, max(seq) AS high FROM messages WHERE session_key = $1',
        [sessionKey],
      );
      const row = result.rows[0];
      return row?.low == null || row.high == null ? 0 : Number(row.high) - Number(row.low) + 1;
    });
  }

  searchMessages(query: MessageSearchQuery): Promise<MessageSearchResult> {
    return this.read(async () => {
      const sql = messageSearchSql(query);
      if (!sql) return { hits: [], total: 0 };
      const counted = await this.db.query<{ count: string }>(sql.count.text, sql.count.values);
      const total = Number(counted.rows[0]?.count ?? 0);
      if (!sql.hits || total === 0) return { hits: [], total };
      const result = await this.db.query<MessageRow & { session_key: string }>(
        sql.hits.text,
        sql.hits.values,
      );
      const hits = result.rows.map((row) => ({ sessionKey: row.session_key, message: storedMessage(row) }));
      return { hits, total };
    });
  }

  setMessagePlatformId(sessionKey: string, seq: number, platformMessageId: string): Promise<void> {
    return this.run(async () => {
      await this.db.query(
        'UPDATE messages SET platform_message_id = $3 WHERE session_key = $1 AND seq = $2',
        [sessionKey, seq, platformMessageId],
      );
    });
  }

  // --- runs ---

  createRun(run: RunRecord): Promise<void> {
    return this.run(async () => {
      const result = await this.db.query(INSERT_RUN, runValues(storedRun(run)));
      if (!result.rowCount) {
        throw new ColloquyError('CONFLICT', `Run "${run.runId}" already exists; run ids must be unique.`, {
          runId: run.runId,
        });
      }
    });
  }

  getRun(runId: string): Promise<RunRecord | undefined> {
    return this.read(async () => {
      const row = (
        await this.db.query<RunRow>(`SELECT ${RUN_READ_COLUMNS} FROM runs WHERE run_id = $1`, [runId])
      ).rows[0];
      return row === undefined ? undefined : runFromRow(row);
    });
  }

  /** One statement: the columns the patch names, and its other fields merged into the record's JSON. */
  updateRun(runId: string, patch: Partial<Omit<RunRecord, 'runId'>>): Promise<RunRecord> {
    return this.run(async () => {
      const update = runUpdate(runId, patch);
      const row = update
        ? (await this.db.query<RunRow>(update.text, update.values)).rows[0]
        : (await this.db.query<RunRow>(`SELECT ${RUN_READ_COLUMNS} FROM runs WHERE run_id = $1`, [runId]))
            .rows[0];
      if (row === undefined) throw new ColloquyError('RUN_NOT_FOUND', `No run "${runId}".`, { runId });
      return runFromRow(row);
    });
  }

  listRuns(query: RunListQuery = {}): Promise<RunRecord[]> {
    return this.read(async () => {
      if (query.statuses?.length === 0) return [];
      const limit = sqlLimit(query.limit);
      if (limit === 0) return [];
      const where = new Conditions();
      if (query.sessionKey !== undefined) where.add('session_key = ?', query.sessionKey);
      if (query.spawnedBy !== undefined) where.add('spawned_by = ?', query.spawnedBy);
      if (query.statuses !== undefined) where.add('status = ANY(?)', [...query.statuses]);
      // Queued and running runs are few whatever the history's length, and `runs_active` (schema 4)
      // holds only them: its condition, written out, lets the planner use it.
      if (query.statuses?.every((status) => ACTIVE_STATUSES.has(status))) where.require(ACTIVE_RUNS);
      const text = `SELECT ${RUN_READ_COLUMNS} FROM runs${where.sql()} ORDER BY created_at DESC, run_id DESC${where.limit(limit)}`;
      return (await this.db.query<RunRow>(text, where.values)).rows.map(runFromRow);
    });
  }

  // --- announce outbox ---

  putOutbox(entry: OutboxEntry): Promise<boolean> {
    return this.run(async () => {
      const result = await this.db.query(
        `INSERT INTO outbox (child_session_key, run_id, requester_session_key, status, next_attempt_at, created_at, entry)
         VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (child_session_key, run_id) DO NOTHING`,
        outboxRow(entry, serializeRecord(entry, 'outbox entry')),
      );
      return (result.rowCount ?? 0) > 0;
    });
  }

  getOutbox(childSessionKey: string, runId: string): Promise<OutboxEntry | undefined> {
    return this.read(async () =>
      first<OutboxEntry>(
        await this.db.query<Row>(
          'SELECT entry AS record FROM outbox WHERE child_session_key = $1 AND run_id = $2',
          [childSessionKey, runId],
        ),
      ),
    );
  }

  updateOutbox(
    childSessionKey: string,
    runId: string,
    patch: Partial<Omit<OutboxEntry, 'childSessionKey' | 'runId'>>,
  ): Promise<OutboxEntry> {
    return this.run(() =>
      this.db.atomic(async (q) => {
        const current = first<OutboxEntry>(
          await q.query<Row>(
            'SELECT entry AS record FROM outbox WHERE child_session_key = $1 AND run_id = $2 FOR UPDATE',
            [childSessionKey, runId],
          ),
        );
        if (!current) {
          throw new ColloquyError(
            'STORE_ERROR',
            `No outbox entry for run "${runId}" of "${childSessionKey}".`,
            {
              childSessionKey,
              runId,
            },
          );
        }
        const next: OutboxEntry = { ...current, ...withoutUndefined(patch), childSessionKey, runId };
        await q.query(
          `UPDATE outbox SET requester_session_key = $3, status = $4, next_attempt_at = $5, created_at = $6, entry = $7
           WHERE child_session_key = $1 AND run_id = $2`,
          outboxRow(next, serializeRecord(next, 'outbox entry')),
        );
        return clone(next);
      }),
    );
  }

  listOutbox(query: OutboxListQuery = {}): Promise<OutboxEntry[]> {
    return this.read(async () => {
      const statuses = query.statuses ?? ['pending'];
      const limit = sqlLimit(query.limit);
      if (statuses.length === 0 || limit === 0) return [];
      const where = new Conditions();
      where.add('status = ANY(?)', [...statuses]);
      if (query.requesterSessionKey !== undefined)
        where.add('requester_session_key = ?', query.requesterSessionKey);
      if (query.dueBefore !== undefined) where.add('next_attempt_at <= ?', query.dueBefore);
      const text = `SELECT entry AS record FROM outbox${where.sql()} ORDER BY created_at, n${where.limit(limit)}`;
      return records<OutboxEntry>(await this.db.query<Row>(text, where.values));
    });
  }

  // --- session inbox ---

  putInbox(entry: InboxEntry): Promise<boolean> {
    return this.run(async () => {
      const result = await this.db.query(
        `INSERT INTO inbox (session_key, id, created_at, consumed_at, entry) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (session_key, id) DO NOTHING`,
        [
          entry.sessionKey,
          entry.id,
          entry.createdAt,
          entry.consumedAt ?? null,
          serializeRecord(entry, 'inbox entry'),
        ],
      );
      return (result.rowCount ?? 0) > 0;
    });
  }

  listInbox(sessionKey: string): Promise<InboxEntry[]> {
    return this.read(async () =>
      records<InboxEntry>(
        await this.db.query<Row>(
          'SELECT entry AS record FROM inbox WHERE session_key = $1 AND consumed_at IS NULL ORDER BY created_at, n',
          [sessionKey],
        ),
      ),
    );
  }

  listInboxSessionKeys(): Promise<string[]> {
    return this.read(async () => {
      const result = await this.db.query<{ session_key: string }>(
        'SELECT DISTINCT session_key FROM inbox WHERE consumed_at IS NULL ORDER BY session_key',
      );
      return result.rows.map((row) => row.session_key);
    });
  }

  consumeInbox(sessionKey: string, ids: readonly string[], at: number): Promise<void> {
    return this.run(async () => {
      if (ids.length === 0) return;
      await this.db.query(
        `UPDATE inbox SET consumed_at = $3, entry = colloquy_merge_json(entry, json_build_object('consumedAt', $3::bigint))
         WHERE session_key = $1 AND id = ANY($2) AND consumed_at IS NULL`,
        [sessionKey, [...ids], at],
      );
    });
  }

  // --- thread bindings ---

  putThreadBinding(binding: ThreadBinding): Promise<void> {
    return this.run(async () => {
      await this.db.query(
        `INSERT INTO thread_bindings (channel, account_id, thread_id, session_key, binding) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (channel, account_id, thread_id) DO UPDATE SET session_key = excluded.session_key, binding = excluded.binding`,
        [
          binding.channel,
          binding.accountId,
          binding.threadId,
          binding.sessionKey,
          serializeRecord(binding, 'thread binding'),
        ],
      );
    });
  }

  getThreadBinding(channel: string, accountId: string, threadId: string): Promise<ThreadBinding | undefined> {
    return this.read(async () =>
      first<ThreadBinding>(
        await this.db.query<Row>(
          'SELECT binding AS record FROM thread_bindings WHERE channel = $1 AND account_id = $2 AND thread_id = $3',
          [channel, accountId, threadId],
        ),
      ),
    );
  }

  listThreadBindings(query: { sessionKey?: string; channel?: string } = {}): Promise<ThreadBinding[]> {
    return this.read(async () => {
      const where = new Conditions();
      if (query.sessionKey !== undefined) where.add('session_key = ?', query.sessionKey);
      if (query.channel !== undefined) where.add('channel = ?', query.channel);
      const text = `SELECT binding AS record FROM thread_bindings${where.sql()} ORDER BY n`;
      return records<ThreadBinding>(await this.db.query<Row>(text, where.values));
    });
  }

  deleteThreadBinding(channel: string, accountId: string, threadId: string): Promise<boolean> {
    return this.run(async () => {
      const result = await this.db.query(
        'DELETE FROM thread_bindings WHERE channel = $1 AND account_id = $2 AND thread_id = $3',
        [channel, accountId, threadId],
      );
      return (result.rowCount ?? 0) > 0;
    });
  }

  // --- pairing ---

  putPairing(record: PairingRecord): Promise<void> {
    return this.run(async () => {
      try {
        await this.db.query(
          `INSERT INTO pairings (channel, account_id, peer_id, status, code, created_at, record) VALUES ($1, $2, $3, $4, $5, $6, $7)
           ON CONFLICT (channel, account_id, peer_id) DO UPDATE SET status = excluded.status, code = excluded.code,
             created_at = excluded.created_at, record = excluded.record`,
          pairingRow(record, serializeRecord(record, 'pairing')),
        );
      } catch (error) {
        if (pgCode(error) !== '23505') throw error;
        throw new ColloquyError(
          'CONFLICT',
          `The ${record.channel} pairing code "${record.code}" is already pending for another peer; issue a new code.`,
          { channel: record.channel, code: record.code },
          { cause: error },
        );
      }
    });
  }

  getPairing(channel: string, accountId: string, peerId: string): Promise<PairingRecord | undefined> {
    return this.read(async () =>
      first<PairingRecord>(
        await this.db.query<Row>(
          'SELECT record FROM pairings WHERE channel = $1 AND account_id = $2 AND peer_id = $3',
          [channel, accountId, peerId],
        ),
      ),
    );
  }

  listPairings(query: PairingListQuery): Promise<PairingRecord[]> {
    return this.read(async () => {
      const where = new Conditions();
      where.add('channel = ?', query.channel);
      if (query.accountId !== undefined) where.add('account_id = ?', query.accountId);
      if (query.status !== undefined) where.add('status = ?', query.status);
      if (query.code !== undefined) where.add("status = 'pending' AND code = ?", query.code);
      const text = `SELECT record FROM pairings${where.sql()} ORDER BY created_at, n`;
      return records<PairingRecord>(await this.db.query<Row>(text, where.values));
    });
  }

  deletePairing(channel: string, accountId: string, peerId: string): Promise<boolean> {
    return this.run(async () => {
      const result = await this.db.query(
        'DELETE FROM pairings WHERE channel = $1 AND account_id = $2 AND peer_id = $3',
        [channel, accountId, peerId],
      );
      return (result.rowCount ?? 0) > 0;
    });
  }

  // --- MCP tokens ---

  putMcpToken(record: McpTokenRecord): Promise<void> {
    return this.run(async () => {
      try {
        await this.db.query(
          'INSERT INTO mcp_tokens (id, hash, agent_id, created_at, revoked_at, record) VALUES ($1, $2, $3, $4, $5, $6)',
          mcpTokenRow(record, serializeRecord(record, 'MCP token')),
        );
      } catch (error) {
        if (pgCode(error) !== '23505') throw error;
        throw new ColloquyError(
          'CONFLICT',
          'An MCP token with this id or hash is already stored; issue a new token.',
          { id: record.id },
          { cause: error },
        );
      }
    });
  }

  getMcpTokenByHash(hash: string): Promise<McpTokenRecord | undefined> {
    return this.read(async () =>
      first<McpTokenRecord>(
        await this.db.query<Row>('SELECT record FROM mcp_tokens WHERE hash = $1', [hash]),
      ),
    );
  }

  listMcpTokens(query: McpTokenListQuery = {}): Promise<McpTokenRecord[]> {
    return this.read(async () => {
      const where = new Conditions();
      if (query.agentId !== undefined) where.add('agent_id = ?', query.agentId);
      if (query.includeRevoked !== true) where.require('revoked_at IS NULL');
      const text = `SELECT record FROM mcp_tokens${where.sql()} ORDER BY created_at, n`;
      return records<McpTokenRecord>(await this.db.query<Row>(text, where.values));
    });
  }

  revokeMcpToken(id: string, at: number): Promise<boolean> {
    return this.run(async () => {
      const result = await this.db.query(
        `UPDATE mcp_tokens SET revoked_at = $1, record = colloquy_merge_json(record, json_build_object('revokedAt', $1::bigint))
         WHERE id = $2 AND revoked_at IS NULL`,
        [at, id],
      );
      return (result.rowCount ?? 0) > 0;
    });
  }

  // --- watching ---

  readChanges(sessionKey: string, sinceVersion: number): Promise<SessionChanges | undefined> {
    return this.read(async () => {
      const since = Math.max(0, Math.floor(sinceVersion));
      const result = await this.db.query<{ version: string; kind: SessionChangeKind | null; n: string }>(
        `WITH s AS (SELECT state_version AS v FROM sessions WHERE key = $1)
         SELECT s.v AS version, c.kind, count(c.kind) AS n FROM s
           LEFT JOIN session_changes c ON c.session_key = $1
             AND c.version > greatest(least($2::bigint, s.v), s.v - $3::bigint)
         GROUP BY s.v, c.kind`,
        [sessionKey, since, SESSION_CHANGE_WINDOW],
      );
      const first = result.rows[0];
      if (first === undefined) return undefined;
      const counts = result.rows.flatMap((row) =>
        row.kind === null ? [] : [[row.kind, Number(row.n)] as const],
      );
      return summarizeChanges(since, Number(first.version), counts);
    });
  }

  putWatch(watch: SessionWatch): Promise<void> {
    return this.run(async () => {
      await this.db.query(
        `INSERT INTO session_watches (watcher_key, target_key, after_version, id, created_at)
         VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (watcher_key, target_key) DO UPDATE SET after_version = excluded.after_version,
           id = excluded.id, created_at = excluded.created_at`,
        [watch.watcherKey, watch.targetKey, watch.afterVersion, watch.id, watch.createdAt],
      );
    });
  }

  listWatches(query: WatchListQuery = {}): Promise<SessionWatch[]> {
    return this.read(async () => {
      const limit = sqlLimit(query.limit);
      if (limit === 0) return [];
      const where = new Conditions();
      if (query.watcherKey !== undefined) where.add('w.watcher_key = ?', query.watcherKey);
      if (query.targetKey !== undefined) where.add('w.target_key = ?', query.targetKey);
      const join = query.due
        ? ' JOIN sessions s ON s.key = w.target_key AND s.state_version > w.after_version'
        : '';
      const result = await this.db.query<{
        watcher_key: string;
        target_key: string;
        after_version: string;
        id: string;
        created_at: string;
      }>(
        `SELECT w.watcher_key, w.target_key, w.after_version, w.id, w.created_at FROM session_watches w${join}` +
          `${where.sql()} ORDER BY w.created_at, w.n${where.limit(limit)}`,
        where.values,
      );
      return result.rows.map((row) => ({
        watcherKey: row.watcher_key,
        targetKey: row.target_key,
        afterVersion: Number(row.after_version),
        id: row.id,
        createdAt: Number(row.created_at),
      }));
    });
  }

  deleteWatch(watcherKey: string, targetKey: string, id?: string): Promise<boolean> {
    return this.run(async () => {
      const result = await this.db.query(
        `DELETE FROM session_watches WHERE watcher_key = $1 AND target_key = $2${id === undefined ? '' : ' AND id = $3'}`,
        id === undefined ? [watcherKey, targetKey] : [watcherKey, targetKey, id],
      );
      return (result.rowCount ?? 0) > 0;
    });
  }

  // --- batched reads: one statement each (pg-batch-reads.ts) ---

  listRunsOfSessions(sessionKeys: readonly string[], limit: number): Promise<RunRecord[][]> {
    return this.read(() => batchStatements.listRunsOfSessions(this.db, sessionKeys, limit));
  }

  readTails(sessionKeys: readonly string[], limit: number): Promise<StoredMessage[][]> {
    return this.read(() => batchStatements.readTails(this.db, sessionKeys, limit));
  }

  // --- turn operations: one statement each (schema 10), joining the open transaction on a `tx`;
  // by rows, as core's defaults do them, for a session record holding a NUL (which jsonb refuses) ---

  async commitInbound(inbound: InboundCommit): Promise<InboundCommitResult> {
    return (
      (await this.run(() => turnStatements.commitInbound(this.db, inbound))) ??
      rowTurnOperations(this).commitInbound(inbound)
    );
  }

  async endTurn(end: TurnEnd): Promise<TurnEndResult> {
    return (
      (await this.run(() => turnStatements.endTurn(this.db, end))) ?? rowTurnOperations(this).endTurn(end)
    );
  }

  recordDeliveries(records: readonly DeliveryRecord[]): Promise<void> {
    return this.run(() => turnStatements.recordDeliveries(this.db, records));
  }

  // --- internals ---

  /** Checks the handle is usable, runs `work`, and maps driver errors onto `ColloquyError`. */
  protected async run<T>(work: () => Promise<T>): Promise<T> {
    this.db.assertUsable();
    try {
      return await work();
    } catch (error) {
      throw this.db.fail(error);
    }
  }

  /**
   * {@link run} for a read: again on another connection when the pool handed out one the server
   * had already closed (a restarted server can leave several such idle connections, so up to
   * {@link READ_ATTEMPTS} times). Writes are never repeated (a write may have reached the server).
   */
  protected async read<T>(work: () => Promise<T>): Promise<T> {
    this.db.assertUsable();
    for (let attempt = 1; ; attempt++) {
      try {
        return await work();
      } catch (error) {
        if (!this.db.retryReads || !isConnectionError(error) || attempt >= READ_ATTEMPTS) {
          throw this.db.fail(error);
        }
      }
    }
  }

  /** Writes a record (without `stateVersion`: the column keeps the store's). */
  private async writeSession(q: Queryable, record: SessionRecord): Promise<void> {
    await this.upsertSession(q, record, UPSERT_SESSION);
  }

  /**
   * Writes a record like {@link writeSession} and returns what the row held before, as this statement
   * saw it: `previous` is null for a new row, and also for a row another transaction inserted since
   * this statement's snapshot, which `updated` then tells apart.
   */
  private async replaceSession(
    q: Queryable,
    record: SessionRecord,
  ): Promise<{ previous: SessionRecord | null; updated: boolean }> {
    const result = await this.upsertSession<{ previous: SessionRecord | null; updated: boolean | null }>(
      q,
      record,
      REPLACE_SESSION,
    );
    const row = result.rows[0];
    return { previous: row?.previous ?? null, updated: row?.updated === true };
  }

  /** Runs an upsert of `record` (its row values as `$1`-`$9`), mapping a taken session id to `CONFLICT`. */
  private async upsertSession<R extends QueryResultRow>(
    q: Queryable,
    record: SessionRecord,
    text: string,
  ): Promise<{ rows: R[] }> {
    const { stateVersion: _column, ...rest } = record;
    try {
      return await q.query<R>(text, sessionRow(record, serializeRecord(rest, 'session')));
    } catch (error) {
      if (pgCode(error) !== '23505') throw error;
      throw new ColloquyError(
        'CONFLICT',
        `Session id "${record.sessionId}" already belongs to another session; give "${record.key}" a fresh sessionId.`,
        { key: record.key, sessionId: record.sessionId },
        { cause: error },
      );
    }
  }
}

/** WHERE conditions with `?` placeholders turned into `$n`. */
class Conditions {
  readonly values: unknown[] = [];
  private readonly parts: string[] = [];

  add(condition: string, value: unknown): void {
    this.values.push(value);
    this.parts.push(condition.replace('?', `$${this.values.length}`));
  }

  /** A condition without a parameter, as written. */
  require(condition: string): void {
    this.parts.push(condition);
  }

  sql(): string {
    return this.parts.length > 0 ? ` WHERE ${this.parts.join(' AND ')}` : '';
  }

  limit(limit: number): string {
    if (limit < 0) return '';
    this.values.push(limit);
    return ` LIMIT $${this.values.length}`;
  }
}

function first<T>(result: { rows: Row[] }): T | undefined {
  const row = result.rows[0];
  return row === undefined ? undefined : (row.record as T);
}

function records<T>(result: { rows: Row[] }): T[] {
  return result.rows.map((row) => row.record as T);
}

function clone<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

function sessionNotFound(key: string): ColloquyError {
  return new ColloquyError('SESSION_NOT_FOUND', `No session "${key}".`, { key });
}

function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
