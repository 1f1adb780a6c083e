import type Database from 'better-sqlite3';
import { indexedTextSql, indexPendingSql, MESSAGE_INDEX, SEARCH_TOKENIZER } from './message-search-sql.js';
import { defineSearchWordsFunction } from './search-words-function.js';
import { FORKED_SQL } from './session-list-plan.js';

/**
 * One step of the schema history. `up` runs inside a transaction together with the bump of
 * `PRAGMA user_version`, so a file is always at exactly one version.
 */
export interface Migration {
  version: number;
  description: string;
  up(db: Database.Database): void;
}

/** `PRAGMA application_id` of a Colloquy store: the ASCII bytes `Colq`. Tells our files from others. */
export const COLLOQUY_APPLICATION_ID = 0x436f6c71;

/**
 * The schema history, oldest first. Never edit a released step: add a new one.
 *
 * - v1: the tables (sessions, messages, runs, outbox, inbox, thread bindings) with their keys.
 * - v2: the indexes that make session lists O(result): `ORDER BY updated_at DESC, key LIMIT n`
 *   walks an index for the live set, per kind, per spawner, and with archived sessions included.
 * - v3: pairings (who may DM a bot), moved here from the channel plugins' files.
 * - v4: full-text search of transcripts: an FTS5 table keyed by `messages.id`, kept by triggers in
 *   the statement that writes a message (so an append and its index entry commit or roll back
 *   together), filled from the transcripts already stored.
 * - v5: the index catches up at search time instead of in every append: `search_state` records the
 *   last indexed `messages.id`, and a search first indexes what was appended since, in its own
 *   transaction (or the caller's). A search still sees every committed message and nothing rolled
 *   back, and an append no longer pays FTS5's per-commit segment write (it cost two thirds of the
 *   append throughput).
 * - v6: watching. `sessions.state_version` (0 for existing sessions; also mirrored into the
 *   record as `stateVersion`), bumped by triggers in the statement that appends a message or
 *   starts/ends a run, so an append pays no extra statement. `session_changes` logs only run
 *   status changes and patches (messages are the versions no row claims, see `summarizeChanges`
 *   in core: a log row per message halved append throughput), pruned to the newest 512 versions
 *   (`SESSION_CHANGE_WINDOW`) on each insert, so it stays bounded per session.
 *   `session_watches` holds the durable watches.
 * - v7: state versions in their column only; a bump no longer rewrites the record's JSON.
 * - v8: fewer index entries move per turn: the session indexes over every session become indexes
 *   over archived sessions only (lists that include archived sessions merge the two walks), and
 *   `runs_by_status` becomes `runs_active`, over queued and running runs only.
 * - v9: search indexes core's words (`searchWords` of `searchableText`: secrets of the built-in
 *   patterns redacted before the text is cut, one word rule for every store), and message ids are
 *   never reused. The index is rebuilt from every stored message, so entries written before (which
 *   held secrets, and split words by FTS5's rule) are gone. `messages` is rebuilt with
 *   `AUTOINCREMENT`: a plain rowid reused the ids of deleted messages, so after the session holding
 *   the newest ones was deleted, new messages got ids at or below the index watermark and were never
 *   indexed. An update that changes a message's text queues it in `search_stale` for the next
 *   catch-up (a trigger cannot compute core's words).
 * - v10: an index of forked sessions (`record.forked`), newest first, so the session tools can
 *   list the forks in a scope (`onlyForked`) without walking it.
 * - v11: MCP access tokens (`mcp_tokens`): the SHA-256 of each owner-issued token, never the token.
 * - v12: a run's status, times, attempts and delivery state (`meta.pendingDelivery`, `meta.delivery`)
 *   in columns of their own, written by column on each change; the record's JSON keeps the rest (its
 *   copies of these fields are moved out), and reads put the columns back. A turn's marks no longer
 *   rewrite the run's whole JSON.
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'tables and keys',
    up(db) {
      db.exec(`
        PRAGMA application_id = ${COLLOQUY_APPLICATION_ID};

        CREATE TABLE sessions (
          key TEXT PRIMARY KEY NOT NULL,
          session_id TEXT NOT NULL UNIQUE,
          agent_id TEXT NOT NULL,
          kind TEXT NOT NULL,
          updated_at INTEGER NOT NULL,
          spawned_by TEXT,
          label TEXT,
          archived_at INTEGER,
          record TEXT NOT NULL
        );
        CREATE INDEX sessions_by_updated ON sessions (updated_at);
        CREATE INDEX sessions_by_label ON sessions (label) WHERE label IS NOT NULL;

        -- Rows go to the end of the table in arrival order; the index finds a session's tail.
        CREATE TABLE messages (
          id INTEGER PRIMARY KEY,
          session_key TEXT NOT NULL REFERENCES sessions (key) ON DELETE CASCADE,
          seq INTEGER NOT NULL,
          message TEXT NOT NULL
        );
        CREATE UNIQUE INDEX messages_by_session ON messages (session_key, seq);

        CREATE TABLE runs (
          run_id TEXT PRIMARY KEY NOT NULL,
          session_key TEXT NOT NULL,
          spawned_by TEXT,
          status TEXT NOT NULL,
          created_at INTEGER NOT NULL,
          record TEXT NOT NULL
        );
        CREATE INDEX runs_by_created ON runs (created_at DESC, run_id DESC);
        CREATE INDEX runs_by_session ON runs (session_key, created_at DESC, run_id DESC);
        CREATE INDEX runs_by_status ON runs (status, created_at DESC, run_id DESC);
        CREATE INDEX runs_by_spawner ON runs (spawned_by, created_at DESC, run_id DESC)
          WHERE spawned_by IS NOT NULL;

        CREATE TABLE outbox (
          child_session_key TEXT NOT NULL,
          run_id TEXT NOT NULL,
          requester_session_key TEXT NOT NULL,
          status TEXT NOT NULL,
          next_attempt_at INTEGER NOT NULL,
          created_at INTEGER NOT NULL,
          entry TEXT NOT NULL,
          PRIMARY KEY (child_session_key, run_id)
        );
        CREATE INDEX outbox_due ON outbox (status, next_attempt_at);
        CREATE INDEX outbox_by_requester ON outbox (requester_session_key, status);

        CREATE TABLE inbox (
          session_key TEXT NOT NULL,
          id TEXT NOT NULL,
          created_at INTEGER NOT NULL,
          consumed_at INTEGER,
          entry TEXT NOT NULL,
          PRIMARY KEY (session_key, id)
        );
        CREATE INDEX inbox_unconsumed ON inbox (session_key, created_at) WHERE consumed_at IS NULL;

        CREATE TABLE thread_bindings (
          channel TEXT NOT NULL,
          account_id TEXT NOT NULL,
          thread_id TEXT NOT NULL,
          session_key TEXT NOT NULL,
          binding TEXT NOT NULL,
          PRIMARY KEY (channel, account_id, thread_id)
        );
        CREATE INDEX thread_bindings_by_session ON thread_bindings (session_key);
      `);
    },
  },
  {
    version: 2,
    description: 'session list indexes',
    up(db) {
      db.exec(`
        DROP INDEX sessions_by_updated;
        -- archived_at (always NULL here) is carried so that walks checking it never touch the table.
        CREATE INDEX sessions_live_recent ON sessions (updated_at DESC, key, archived_at)
          WHERE archived_at IS NULL;
        CREATE INDEX sessions_live_by_kind ON sessions (kind, updated_at DESC, key, archived_at)
          WHERE archived_at IS NULL;
        CREATE INDEX sessions_recent ON sessions (updated_at DESC, key);
        CREATE INDEX sessions_by_kind ON sessions (kind, updated_at DESC, key);
        CREATE INDEX sessions_by_spawner ON sessions (spawned_by, updated_at DESC, key)
          WHERE spawned_by IS NOT NULL;
      `);
    },
  },
  {
    version: 3,
    description: 'pairings',
    up(db) {
      db.exec(`
        CREATE TABLE pairings (
          channel TEXT NOT NULL,
          account_id TEXT NOT NULL,
          peer_id TEXT NOT NULL,
          status TEXT NOT NULL,
          code TEXT,
          created_at INTEGER NOT NULL,
          record TEXT NOT NULL,
          PRIMARY KEY (channel, account_id, peer_id)
        );
        CREATE UNIQUE INDEX pairings_pending_code ON pairings (channel, code) WHERE status = 'pending';
        CREATE INDEX pairings_by_channel ON pairings (channel, created_at);
      `);
    },
  },
  {
    version: 4,
    description: 'transcript search',
    up(db) {
      const newText = indexedTextSql('new.message');
      db.exec(`
        CREATE VIRTUAL TABLE messages_search USING fts5(
          body, content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 0'
        );
        CREATE TRIGGER messages_search_insert AFTER INSERT ON messages BEGIN
          INSERT INTO messages_search (rowid, body)
            SELECT new.id, body FROM (SELECT ${newText} AS body) WHERE body IS NOT NULL;
        END;
        CREATE TRIGGER messages_search_delete AFTER DELETE ON messages BEGIN
          DELETE FROM messages_search WHERE rowid = old.id;
        END;
        CREATE TRIGGER messages_search_update AFTER UPDATE OF message ON messages
          WHEN ${indexedTextSql('old.message')} IS NOT ${newText} BEGIN
          DELETE FROM messages_search WHERE rowid = old.id;
          INSERT INTO messages_search (rowid, body)
            SELECT new.id, body FROM (SELECT ${newText} AS body) WHERE body IS NOT NULL;
        END;
        INSERT INTO messages_search (rowid, body)
          SELECT id, body FROM (SELECT id, ${indexedTextSql('message')} AS body FROM messages)
          WHERE body IS NOT NULL;
      `);
    },
  },
  {
    version: 5,
    description: 'transcript search indexed at search time',
    up(db) {
      const newText = indexedTextSql('new.message');
      db.exec(`
        CREATE TABLE search_state (
          id INTEGER PRIMARY KEY CHECK (id = 1),
          indexed_up_to INTEGER NOT NULL
        );
        INSERT INTO search_state (id, indexed_up_to) VALUES (1, (SELECT coalesce(max(id), 0) FROM messages));
        DROP TRIGGER messages_search_insert;
        DROP TRIGGER messages_search_update;
        CREATE TRIGGER messages_search_update AFTER UPDATE OF message ON messages
          WHEN old.id <= (SELECT indexed_up_to FROM search_state)
            AND ${indexedTextSql('old.message')} IS NOT ${newText} BEGIN
          DELETE FROM messages_search WHERE rowid = old.id;
          INSERT INTO messages_search (rowid, body)
            SELECT new.id, body FROM (SELECT ${newText} AS body) WHERE body IS NOT NULL;
        END;
      `);
    },
  },
  {
    version: 6,
    description: 'session state versions, change log and watches',
    up(db) {
      const bump = (key: string) => `
          UPDATE sessions SET state_version = state_version + 1,
            record = json_set(record, '$.stateVersion', state_version + 1)
            WHERE key = ${key};`;
      const log = (key: string, kind: string) => `${bump(key)}
          INSERT INTO session_changes (session_key, version, kind)
            SELECT key, state_version, '${kind}' FROM sessions WHERE key = ${key};`;
      const started = `('running', 'done', 'error', 'timeout', 'killed', 'interrupted')`;
      db.exec(`
        ALTER TABLE sessions ADD COLUMN state_version INTEGER NOT NULL DEFAULT 0;

        CREATE TABLE session_changes (
          session_key TEXT NOT NULL,
          version INTEGER NOT NULL,
          kind TEXT NOT NULL,
          PRIMARY KEY (session_key, version)
        ) WITHOUT ROWID;

        CREATE TABLE session_watches (
          watcher_key TEXT NOT NULL,
          target_key TEXT NOT NULL,
          after_version INTEGER NOT NULL,
          id TEXT NOT NULL,
          created_at INTEGER NOT NULL,
          PRIMARY KEY (watcher_key, target_key)
        );
        CREATE INDEX session_watches_by_target ON session_watches (target_key, after_version);
        CREATE INDEX session_watches_by_created ON session_watches (created_at);

        CREATE TRIGGER messages_state_version AFTER INSERT ON messages BEGIN${bump('new.session_key')}
        END;
        CREATE TRIGGER runs_state_version_insert AFTER INSERT ON runs
          WHEN new.status IN ${started} BEGIN${log('new.session_key', 'status')}
        END;
        CREATE TRIGGER runs_state_version_update AFTER UPDATE OF status ON runs
          WHEN new.status IS NOT old.status AND new.status IN ${started} BEGIN${log('new.session_key', 'status')}
        END;
        -- 512 is SESSION_CHANGE_WINDOW of @colloquy/core, frozen here as this step was released.
        CREATE TRIGGER session_changes_prune AFTER INSERT ON session_changes BEGIN
          DELETE FROM session_changes
            WHERE session_key = new.session_key AND version <= new.version - 512;
        END;
      `);
    },
  },
  {
    version: 7,
    description: 'session state versions in their column only',
    up(db) {
      // A change bumps the integer column alone; the record no longer mirrors it (the engine adds
      // `stateVersion` to a record as it reads the row), so a bump does not rewrite the JSON. The
      // triggers are spelled out again rather than shared with version 6: a released step never changes.
      const bump = (key: string) => `
          UPDATE sessions SET state_version = state_version + 1 WHERE key = ${key};`;
      const log = (key: string, kind: string) => `${bump(key)}
          INSERT INTO session_changes (session_key, version, kind)
            SELECT key, state_version, '${kind}' FROM sessions WHERE key = ${key};`;
      const started = `('running', 'done', 'error', 'timeout', 'killed', 'interrupted')`;
      db.exec(`
        DROP TRIGGER messages_state_version;
        DROP TRIGGER runs_state_version_insert;
        DROP TRIGGER runs_state_version_update;
        CREATE TRIGGER messages_state_version AFTER INSERT ON messages BEGIN${bump('new.session_key')}
        END;
        CREATE TRIGGER runs_state_version_insert AFTER INSERT ON runs
          WHEN new.status IN ${started} BEGIN${log('new.session_key', 'status')}
        END;
        CREATE TRIGGER runs_state_version_update AFTER UPDATE OF status ON runs
          WHEN new.status IS NOT old.status AND new.status IN ${started} BEGIN${log('new.session_key', 'status')}
        END;
        UPDATE sessions SET record = json_remove(record, '$.stateVersion')
          WHERE json_type(record, '$.stateVersion') IS NOT NULL;
      `);
    },
  },
  {
    version: 8,
    description: 'hot-path indexes: archived sessions and active runs apart',
    up(db) {
      // A live session's write moved four `updated_at` entries (live and all, by recency and by kind);
      // now two. Lists with archived sessions merge the live walk with the archived one. A run's status
      // changes moved its entry through `runs_by_status` twice per turn; the active runs, the only ones
      // listed by status alone, now have a small index of their own that a finished run leaves.
      db.exec(`
        DROP INDEX sessions_recent;
        DROP INDEX sessions_by_kind;
        CREATE INDEX sessions_archived_recent ON sessions (updated_at DESC, key, archived_at)
          WHERE archived_at IS NOT NULL;
        CREATE INDEX sessions_archived_by_kind ON sessions (kind, updated_at DESC, key, archived_at)
          WHERE archived_at IS NOT NULL;
        DROP INDEX runs_by_status;
        CREATE INDEX runs_active ON runs (status, created_at DESC, run_id DESC)
          WHERE status IN ('queued', 'running');
      `);
    },
  },
  {
    version: 9,
    description: "search indexes core's words with secrets redacted; message ids never reused",
    up(db) {
      defineSearchWordsFunction(db);
      const newText = indexedTextSql('new.message', false);
      db.exec(`
        CREATE TABLE messages_v9 (
          id INTEGER PRIMARY KEY AUTOINCREMENT,
          session_key TEXT NOT NULL REFERENCES sessions (key) ON DELETE CASCADE,
          seq INTEGER NOT NULL,
          message TEXT NOT NULL
        );
        INSERT INTO messages_v9 (id, session_key, seq, message)
          SELECT id, session_key, seq, message FROM messages ORDER BY id;
        DROP TABLE messages;
        ALTER TABLE messages_v9 RENAME TO messages;
        CREATE UNIQUE INDEX messages_by_session ON messages (session_key, seq);
        CREATE TRIGGER messages_state_version AFTER INSERT ON messages BEGIN
          UPDATE sessions SET state_version = state_version + 1 WHERE key = new.session_key;
        END;

        DROP TABLE messages_search;
        CREATE VIRTUAL TABLE messages_search USING fts5(
          body, content = '', contentless_delete = 1, tokenize = '${SEARCH_TOKENIZER}'
        );
        CREATE TABLE search_stale (id INTEGER PRIMARY KEY);
        UPDATE search_state SET indexed_up_to = 0;
        CREATE TRIGGER messages_search_delete AFTER DELETE ON messages BEGIN
          DELETE FROM messages_search WHERE rowid = old.id;
        END;
        CREATE TRIGGER messages_search_update AFTER UPDATE OF message ON messages
          WHEN old.id <= (SELECT indexed_up_to FROM search_state)
            AND ${indexedTextSql('old.message', false)} IS NOT ${newText} BEGIN
          DELETE FROM messages_search WHERE rowid = old.id;
          INSERT OR IGNORE INTO search_stale (id) VALUES (old.id);
        END;
      `);
      db.exec(indexPendingSql(MESSAGE_INDEX));
      db.exec('UPDATE search_state SET indexed_up_to = (SELECT coalesce(max(id), 0) FROM messages)');
    },
  },
  {
    version: 10,
    description: 'forked sessions indexed',
    up(db) {
      db.exec(
        `CREATE INDEX sessions_forked ON sessions (updated_at DESC, key, archived_at) WHERE ${FORKED_SQL};`,
      );
    },
  },
  {
    version: 11,
    description: 'MCP access tokens',
    up(db) {
      db.exec(`
        CREATE TABLE mcp_tokens (
          id TEXT PRIMARY KEY,
          hash TEXT NOT NULL UNIQUE,
          agent_id TEXT NOT NULL,
          created_at INTEGER NOT NULL,
          revoked_at INTEGER,
          record TEXT NOT NULL
        );
        CREATE INDEX mcp_tokens_by_agent ON mcp_tokens (agent_id, created_at);
      `);
    },
  },
  {
    version: 12,
    description: 'run status, times, attempts and delivery state in columns',
    up(db) {
      // `status` has had its column since v1; the JSON's copy goes too. A delivery field is moved only
      // when the JSON holds it (json_type is NULL for an absent one), so a stored null stays a null.
      const moved = (path: string) =>
        `CASE WHEN json_type(record, '${path}') IS NOT NULL THEN record -> '${path}' END`;
      db.exec(`
        ALTER TABLE runs ADD COLUMN updated_at INTEGER;
        ALTER TABLE runs ADD COLUMN started_at INTEGER;
        ALTER TABLE runs ADD COLUMN ended_at INTEGER;
        ALTER TABLE runs ADD COLUMN attempts INTEGER;
        ALTER TABLE runs ADD COLUMN pending_delivery TEXT;
        ALTER TABLE runs ADD COLUMN delivery TEXT;
        UPDATE runs SET
          updated_at = json_extract(record, '$.updatedAt'),
          started_at = json_extract(record, '$.startedAt'),
          ended_at = json_extract(record, '$.endedAt'),
          attempts = json_extract(record, '$.attempts'),
          pending_delivery = ${moved('$.meta.pendingDelivery')},
          delivery = ${moved('$.meta.delivery')},
          record = json_remove(record, '$.status', '$.updatedAt', '$.startedAt', '$.endedAt', '$.attempts',
            '$.meta.pendingDelivery', '$.meta.delivery');
      `);
    },
  },
];

/** The schema version this build of `@colloquy/store-sqlite` writes. Files are migrated up to it. */
export const SQLITE_SCHEMA_VERSION: number = MIGRATIONS[MIGRATIONS.length - 1]!.version;

/** What {@link migrate} did. */
export interface MigrationResult {
  from: number;
  to: number;
  applied: number[];
}

/**
 * Brings `db` up to `target`, one transaction per step. The version is re-read under the write
 * lock, so two processes opening a fresh file at once do not both run a step.
 *
 * @param migrations - the history (default {@link MIGRATIONS}); tests pass a prefix to build old files
 */
export function migrate(
  db: Database.Database,
  target: number = SQLITE_SCHEMA_VERSION,
  migrations: readonly Migration[] = MIGRATIONS,
): MigrationResult {
  const from = readUserVersion(db);
  const applied: number[] = [];
  for (const step of migrations) {
    if (step.version > target) break;
    // Checked before taking the write lock, so opening a current file never waits for a writer.
    if (readUserVersion(db) >= step.version) continue;
    const ran = db
      .transaction(() => {
        if (readUserVersion(db) >= step.version) return false;
        step.up(db);
        db.pragma(`user_version = ${step.version}`);
        return true;
      })
      .immediate();
    if (ran) applied.push(step.version);
  }
  return { from, to: readUserVersion(db), applied };
}

/** `PRAGMA user_version` of `db`. */
export function readUserVersion(db: Database.Database): number {
  return db.pragma('user_version', { simple: true }) as number;
}
