import type { SessionChangeKind } from '@colloquy/core/store';
import type Database from 'better-sqlite3';
import { indexPendingSql, MESSAGE_INDEX } from '../message-search-sql.js';
import { RUN_READ_COLUMNS, type RunRow } from './runs.js';

/** A session row as read: the record's JSON and its state version, kept in a column of its own. */
export type SessionRow = [record: string, stateVersion: number];

/** A prepared better-sqlite3 statement with typed parameters and result. */
export type Stmt<P extends unknown[], R = unknown> = Database.Statement<P, R>;

/** Every fixed statement of the engine, prepared once when the store opens. */
export interface Statements {
  // --- transactions ---
  begin: Stmt<[]>;
  commit: Stmt<[]>;
  rollback: Stmt<[]>;
  savepoint: Stmt<[]>;
  release: Stmt<[]>;
  rollbackToSavepoint: Stmt<[]>;

  // --- sessions ---
  sessionByKey: Stmt<[string], SessionRow>;
  sessionById: Stmt<[string], string>;
  sessionExists: Stmt<[string], number>;
  upsertSession: Stmt<unknown[]>;
  updateSessionRecord: Stmt<[number, string, string]>;
  deleteSession: Stmt<[string]>;
  deleteMessages: Stmt<[string]>;
  deleteInbox: Stmt<[string]>;
  deleteBindingsOfSession: Stmt<[string]>;

  // --- transcripts ---
  lastSeq: Stmt<[string], number>;
  firstSeq: Stmt<[string], number>;
  insertMessage: Stmt<[string, number, string]>;
  appendOne: Stmt<[{ key: string; json: string }], number>;
  tail: Stmt<[string, number, number, number], string>;
  messagesAfter: Stmt<[string, number, number], { seq: number; message: string }>;
  setPlatformId: Stmt<[string, string, number]>;

  // --- message search ---
  searchPending: Stmt<[], number>;
  searchCatchUp: Stmt<[]>;
  searchMark: Stmt<[]>;
  searchClearStale: Stmt<[]>;

  // --- runs ---
  insertRun: Stmt<unknown[]>;
  runById: Stmt<[string], RunRow>;
  runExists: Stmt<[string], number>;
  runHasDelivery: Stmt<[string], number>;
  setRunDelivery: Stmt<[string, string]>;

  // --- announce outbox and session inbox ---
  insertOutbox: Stmt<unknown[]>;
  updateOutbox: Stmt<unknown[]>;
  outboxById: Stmt<[string, string], string>;
  insertInbox: Stmt<unknown[]>;
  inboxOf: Stmt<[string], string>;
  inboxSessionKeys: Stmt<[], string>;
  inboxWaiting: Stmt<[string], number>;
  consumeInbox: Stmt<[number, number, string, string]>;

  // --- session changes and watches ---
  bumpVersion: Stmt<[string], number>;
  insertChange: Stmt<[string, number, SessionChangeKind]>;
  stateVersionOf: Stmt<[string], number>;
  changeCountsAfter: Stmt<[string, number], [SessionChangeKind, number]>;
  deleteChanges: Stmt<[string]>;
  deleteWatchesOf: Stmt<[string, string]>;
  targetWatched: Stmt<[string], number>;
  targetWatchDue: Stmt<[string], number>;
  upsertWatch: Stmt<[string, string, number, string, number]>;
  deleteWatch: Stmt<[string, string]>;
  deleteWatchWithId: Stmt<[string, string, string]>;

  // --- thread bindings ---
  upsertBinding: Stmt<unknown[]>;
  bindingById: Stmt<[string, string, string], string>;
  deleteBinding: Stmt<[string, string, string]>;

  // --- pairings ---
  upsertPairing: Stmt<unknown[]>;
  pairingById: Stmt<[string, string, string], string>;
  deletePairing: Stmt<[string, string, string]>;
  // --- MCP tokens ---
  insertMcpToken: Stmt<unknown[]>;
  mcpTokenByHash: Stmt<[string], string>;
  mcpTokenById: Stmt<[string], string>;
  revokeMcpToken: Stmt<[number, string, string]>;
}

/**
 * Prepares the engine's fixed statements on `db`. A read-only store begins with a plain `BEGIN`
 * (it never takes the write lock); a writable one with `BEGIN IMMEDIATE`.
 */
export function prepareStatements(db: Database.Database, readonly: boolean): Statements {
  const one = <P extends unknown[], R>(sql: string) => db.prepare<P, R>(sql).pluck();
  return {
    // --- transactions ---
    begin: db.prepare(readonly ? 'BEGIN' : 'BEGIN IMMEDIATE'),
    commit: db.prepare('COMMIT'),
    rollback: db.prepare('ROLLBACK'),
    savepoint: db.prepare('SAVEPOINT colloquy_transaction'),
    release: db.prepare('RELEASE colloquy_transaction'),
    rollbackToSavepoint: db.prepare('ROLLBACK TO colloquy_transaction'),

    // --- sessions ---
    sessionByKey: db
      .prepare<[string], SessionRow>('SELECT record, state_version FROM sessions WHERE key = ?')
      .raw(),
    sessionById: one('SELECT record FROM sessions WHERE session_id = ?'),
    sessionExists: one('SELECT 1 FROM sessions WHERE key = ?'),
    // The state version is the store's: it lives in its column only (see `sessionFromRow`), and a write
    // leaves it alone.
    upsertSession: db.prepare(
      `INSERT INTO sessions (key, session_id, agent_id, kind, updated_at, spawned_by, label, archived_at, record)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (key) DO UPDATE SET session_id = excluded.session_id, agent_id = excluded.agent_id,
         kind = excluded.kind, updated_at = excluded.updated_at, spawned_by = excluded.spawned_by,
         label = excluded.label, archived_at = excluded.archived_at, record = excluded.record`,
    ),
    // A patch that leaves the other columns alone: no insert attempt and no unchanged index rewritten.
    updateSessionRecord: db.prepare('UPDATE sessions SET updated_at = ?, record = ? WHERE key = ?'),
    deleteSession: db.prepare('DELETE FROM sessions WHERE key = ?'),
    deleteMessages: db.prepare('DELETE FROM messages WHERE session_key = ?'),
    deleteInbox: db.prepare('DELETE FROM inbox WHERE session_key = ?'),
    deleteBindingsOfSession: db.prepare('DELETE FROM thread_bindings WHERE session_key = ?'),

    // --- transcripts ---
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
    tail: one(
      'SELECT message FROM messages WHERE session_key = ? AND seq < ? AND seq > ? ORDER BY seq DESC LIMIT ?',
    ),
    messagesAfter: db.prepare(
      'SELECT seq, message FROM messages WHERE session_key = ? AND seq > ? ORDER BY seq LIMIT ?',
    ),
    setPlatformId: db.prepare(
      `UPDATE messages SET message = json_set(message, '$.platformMessageId', ?)
       WHERE session_key = ? AND seq = ?`,
    ),

    // --- message search ---
    searchPending: one(
      `SELECT (SELECT coalesce(max(id), 0) FROM messages) > (SELECT indexed_up_to FROM search_state)
         OR EXISTS (SELECT 1 FROM search_stale)`,
    ),
    searchCatchUp: db.prepare(indexPendingSql(MESSAGE_INDEX)),
    searchMark: db.prepare(
      'UPDATE search_state SET indexed_up_to = (SELECT coalesce(max(id), 0) FROM messages)',
    ),
    searchClearStale: db.prepare('DELETE FROM search_stale'),

    // --- runs ---
    insertRun: db.prepare(
      `INSERT INTO runs (run_id, session_key, spawned_by, status, created_at, updated_at, started_at, ended_at,
         attempts, pending_delivery, delivery, record)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (run_id) DO NOTHING`,
    ),
    // Updates are built per patch (see `updateRun`): SQLite rewrites every index on a column an UPDATE
    // sets, so each sets only the columns its patch names.
    runById: db.prepare<[string], RunRow>(`SELECT ${RUN_READ_COLUMNS} FROM runs WHERE run_id = ?`).raw(),
    runExists: one('SELECT 1 FROM runs WHERE run_id = ?'),
    runHasDelivery: one('SELECT delivery IS NOT NULL FROM runs WHERE run_id = ?'),
    setRunDelivery: db.prepare('UPDATE runs SET delivery = ? WHERE run_id = ?'),

    // --- announce outbox and session inbox ---
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
    inboxSessionKeys: one(
      'SELECT DISTINCT session_key FROM inbox WHERE consumed_at IS NULL ORDER BY session_key',
    ),
    inboxWaiting: one('SELECT 1 FROM inbox WHERE session_key = ? AND consumed_at IS NULL LIMIT 1'),
    consumeInbox: db.prepare(
      `UPDATE inbox SET consumed_at = ?, entry = json_set(entry, '$.consumedAt', ?)
       WHERE session_key = ? AND id = ? AND consumed_at IS NULL`,
    ),

    // --- session changes and watches ---
    // Messages and run starts/ends bump the version in triggers (migrations v6, v7); patches here.
    bumpVersion: one(
      'UPDATE sessions SET state_version = state_version + 1 WHERE key = ? RETURNING state_version',
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
    targetWatchDue: one(
      `SELECT 1 FROM session_watches w JOIN sessions s ON s.key = w.target_key
       WHERE w.target_key = ? AND s.state_version > w.after_version LIMIT 1`,
    ),
    upsertWatch: db.prepare(
      `INSERT INTO session_watches (watcher_key, target_key, after_version, id, created_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (watcher_key, target_key) DO UPDATE SET after_version = excluded.after_version,
         id = excluded.id, created_at = excluded.created_at`,
    ),
    deleteWatch: db.prepare('DELETE FROM session_watches WHERE watcher_key = ? AND target_key = ?'),
    deleteWatchWithId: db.prepare(
      'DELETE FROM session_watches WHERE watcher_key = ? AND target_key = ? AND id = ?',
    ),

    // --- thread bindings ---
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

    // --- pairings ---
    upsertPairing: db.prepare(
      `INSERT INTO pairings (channel, account_id, peer_id, status, code, created_at, record)
       VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (channel, account_id, peer_id) DO UPDATE SET status = excluded.status,
         code = excluded.code, created_at = excluded.created_at, record = excluded.record`,
    ),
    pairingById: one('SELECT record FROM pairings WHERE channel = ? AND account_id = ? AND peer_id = ?'),
    deletePairing: db.prepare('DELETE FROM pairings WHERE channel = ? AND account_id = ? AND peer_id = ?'),

    // --- MCP tokens ---
    insertMcpToken: db.prepare(
      'INSERT INTO mcp_tokens (id, hash, agent_id, created_at, revoked_at, record) VALUES (?, ?, ?, ?, ?, ?)',
    ),
    mcpTokenByHash: one('SELECT record FROM mcp_tokens WHERE hash = ?'),
    mcpTokenById: one('SELECT record FROM mcp_tokens WHERE id = ?'),
    revokeMcpToken: db.prepare(
      'UPDATE mcp_tokens SET revoked_at = ?, record = ? WHERE id = ? AND revoked_at IS NULL',
    ),
  };
}
