import { ColloquyError, type TranscriptMessage } from '@colloquy/core';
import { SEARCH_INDEX_MAX_CHARS } from '@colloquy/core/store';
import type { ClientBase } from 'pg';
import { CACHED_PLANS_SQL } from './cached-plans-sql.js';
import { NUL_SESSIONS_SQL } from './nul-sessions-sql.js';
import { RUN_COLUMNS_SQL } from './run-columns-sql.js';
import { searchVector } from './search-vector.js';
import { TURN_FUNCTIONS_SQL } from './turn-functions-sql.js';

/**
 * One step of the schema history; it runs in the migrating transaction, as SQL or, where it needs the
 * store's code, as a function of the connection. Never edit a released step.
 */
type Migration = { version: number; description: string } & (
  | { sql: string }
  | { up(client: ClientBase): Promise<void> }
);

/** Messages re-indexed per round trip by {@link reindexMessages}. */
const REINDEX_BATCH = 1000;

// Keys compare byte-wise (COLLATE "C"), as the other stores compare them, whatever the database
// collation. Records are `json` (kept as written); the columns beside them are what queries use.
const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'tables, keys and the indexes that keep lists and tail reads O(result)',
    sql: `
      CREATE TABLE sessions (
        key text COLLATE "C" PRIMARY KEY,
        session_id text COLLATE "C" NOT NULL UNIQUE,
        agent_id text COLLATE "C" NOT NULL,
        kind text NOT NULL,
        updated_at bigint NOT NULL,
        spawned_by text COLLATE "C",
        label text COLLATE "C",
        archived_at bigint,
        next_seq bigint NOT NULL DEFAULT 1,
        record json NOT NULL
      );
      CREATE INDEX sessions_live_recent ON sessions (updated_at DESC, key) WHERE archived_at IS NULL;
      CREATE INDEX sessions_recent ON sessions (updated_at DESC, key);
      CREATE INDEX sessions_live_by_kind ON sessions (kind, updated_at DESC, key) WHERE archived_at IS NULL;
      CREATE INDEX sessions_by_kind ON sessions (kind, updated_at DESC, key);
      CREATE INDEX sessions_by_spawner ON sessions (spawned_by, updated_at DESC, key) WHERE spawned_by IS NOT NULL;
      CREATE INDEX sessions_by_label ON sessions (label) WHERE label IS NOT NULL;

      CREATE TABLE messages (
        session_key text COLLATE "C" NOT NULL,
        seq bigint NOT NULL,
        message json NOT NULL,
        PRIMARY KEY (session_key, seq)
      );

      CREATE TABLE runs (
        run_id text COLLATE "C" PRIMARY KEY,
        session_key text COLLATE "C" NOT NULL,
        spawned_by text COLLATE "C",
        status text NOT NULL,
        created_at bigint NOT NULL,
        record json NOT NULL
      );
      CREATE INDEX runs_by_created ON runs (created_at DESC, run_id DESC);
      CREATE INDEX runs_by_session ON runs (session_key, created_at DESC, run_id DESC);
      CREATE INDEX runs_by_status ON runs (status, created_at DESC, run_id DESC);
      CREATE INDEX runs_by_spawner ON runs (spawned_by, created_at DESC, run_id DESC) WHERE spawned_by IS NOT NULL;

      CREATE TABLE outbox (
        child_session_key text COLLATE "C" NOT NULL,
        run_id text COLLATE "C" NOT NULL,
        requester_session_key text COLLATE "C" NOT NULL,
        status text NOT NULL,
        next_attempt_at bigint NOT NULL,
        created_at bigint NOT NULL,
        n bigserial NOT NULL,
        entry json NOT NULL,
        PRIMARY KEY (child_session_key, run_id)
      );
      CREATE INDEX outbox_due ON outbox (status, next_attempt_at);
      CREATE INDEX outbox_by_requester ON outbox (requester_session_key, status);

      CREATE TABLE inbox (
        session_key text COLLATE "C" NOT NULL,
        id text COLLATE "C" NOT NULL,
        created_at bigint NOT NULL,
        consumed_at bigint,
        n bigserial NOT NULL,
        entry json NOT NULL,
        PRIMARY KEY (session_key, id)
      );
      CREATE INDEX inbox_unconsumed ON inbox (session_key, created_at, n) WHERE consumed_at IS NULL;

      CREATE TABLE thread_bindings (
        channel text COLLATE "C" NOT NULL,
        account_id text COLLATE "C" NOT NULL,
        thread_id text COLLATE "C" NOT NULL,
        session_key text COLLATE "C" NOT NULL,
        n bigserial NOT NULL,
        binding json NOT NULL,
        PRIMARY KEY (channel, account_id, thread_id)
      );
      CREATE INDEX thread_bindings_by_session ON thread_bindings (session_key);

      CREATE TABLE pairings (
        channel text COLLATE "C" NOT NULL,
        account_id text COLLATE "C" NOT NULL,
        peer_id text COLLATE "C" NOT NULL,
        status text NOT NULL,
        code text COLLATE "C",
        created_at bigint NOT NULL,
        n bigserial NOT NULL,
        record json NOT NULL,
        PRIMARY KEY (channel, account_id, peer_id)
      );
      CREATE UNIQUE INDEX pairings_pending_code ON pairings (channel, code) WHERE status = 'pending';
      CREATE INDEX pairings_by_channel ON pairings (channel, created_at, n);
    `,
  },
  {
    version: 2,
    description: 'transcript search: a tsvector of each message, computed in the statement that writes it',
    // A generated column is written by the INSERT itself, so an append and its index entry commit
    // or roll back together; adding it rewrites the table, which indexes the transcripts already
    // stored. The text is what `searchableText` in core picks.
    sql: `
      CREATE FUNCTION colloquy_indexed_text(m json) RETURNS text
        LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT left(CASE
          WHEN m->>'role' = 'toolResult' THEN NULL
          WHEN json_typeof(m->'content') = 'string' THEN m->>'content'
          WHEN json_typeof(m->'content') = 'array' THEN (
            SELECT string_agg(e.block->>'text', ' ' ORDER BY e.i)
            FROM json_array_elements(m->'content') WITH ORDINALITY AS e(block, i)
            WHERE json_typeof(e.block) = 'object' AND e.block->>'type' = 'text'
              AND json_typeof(e.block->'text') = 'string')
        END, ${SEARCH_INDEX_MAX_CHARS})
      $$;
      ALTER TABLE messages ADD COLUMN search tsvector GENERATED ALWAYS AS
        (to_tsvector('simple'::regconfig, coalesce(colloquy_indexed_text(message), ''))) STORED;
      CREATE INDEX messages_search ON messages USING gin (search);
    `,
  },
  {
    version: 3,
    description: 'watching: session state versions, a bounded change log and durable watches',
    // Every change goes through colloquy_note_change, called by triggers in the statement that
    // made it (an append, a run starting or ending, a record patch), so no write pays an extra
    // round trip and no caller can forget it. Only status and patch changes get a log row
    // (messages are the versions no row claims, see summarizeChanges in core), pruned to the
    // newest 512 versions (SESSION_CHANGE_WINDOW of @colloquy/core, frozen here) on each insert.
    // The fields a patch ignores are SESSION_BOOKKEEPING_FIELDS of @colloquy/core.
    sql: `
      ALTER TABLE sessions ADD COLUMN state_version bigint NOT NULL DEFAULT 0;

      CREATE TABLE session_changes (
        session_key text COLLATE "C" NOT NULL,
        version bigint NOT NULL,
        kind text NOT NULL,
        PRIMARY KEY (session_key, version)
      );

      CREATE TABLE session_watches (
        watcher_key text COLLATE "C" NOT NULL,
        target_key text COLLATE "C" NOT NULL,
        after_version bigint NOT NULL,
        id text COLLATE "C" NOT NULL,
        created_at bigint NOT NULL,
        n bigserial NOT NULL,
        PRIMARY KEY (watcher_key, target_key)
      );
      CREATE INDEX session_watches_by_target ON session_watches (target_key, after_version);
      CREATE INDEX session_watches_by_created ON session_watches (created_at, n);

      CREATE FUNCTION colloquy_note_change(target text, change_kind text, n bigint) RETURNS void
        LANGUAGE plpgsql AS $$
        DECLARE v bigint;
        BEGIN
          IF n <= 0 THEN RETURN; END IF;
          UPDATE sessions SET state_version = state_version + n,
              record = (record::jsonb || jsonb_build_object('stateVersion', state_version + n))::json
            WHERE key = target RETURNING state_version INTO v;
          IF v IS NULL OR change_kind = 'message' THEN RETURN; END IF;
          INSERT INTO session_changes (session_key, version, kind)
            SELECT target, g, change_kind FROM generate_series(v - n + 1, v) AS g;
          DELETE FROM session_changes WHERE session_key = target AND version <= v - 512;
        END $$;

      CREATE FUNCTION colloquy_messages_appended() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          PERFORM colloquy_note_change(a.session_key, 'message', a.n)
            FROM (SELECT session_key, count(*) AS n FROM appended GROUP BY session_key) AS a;
          RETURN NULL;
        END $$;
      CREATE TRIGGER messages_state_version AFTER INSERT ON messages
        REFERENCING NEW TABLE AS appended FOR EACH STATEMENT EXECUTE FUNCTION colloquy_messages_appended();

      CREATE FUNCTION colloquy_run_status_changed() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.status IN ('running', 'done', 'error', 'timeout', 'killed', 'interrupted')
             AND (TG_OP = 'INSERT' OR NEW.status IS DISTINCT FROM OLD.status) THEN
            PERFORM colloquy_note_change(NEW.session_key, 'status', 1);
          END IF;
          RETURN NULL;
        END $$;
      CREATE TRIGGER runs_state_version AFTER INSERT OR UPDATE OF status ON runs
        FOR EACH ROW EXECUTE FUNCTION colloquy_run_status_changed();

      CREATE FUNCTION colloquy_session_patched() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE bookkeeping text[] := ARRAY['updatedAt', 'status', 'startedAt', 'endedAt', 'usage',
          'estimatedCostUsd', 'systemSent', 'abortedLastRun', 'meta', 'stateVersion'];
        BEGIN
          IF (OLD.record::jsonb - bookkeeping) IS DISTINCT FROM (NEW.record::jsonb - bookkeeping) THEN
            PERFORM colloquy_note_change(NEW.key, 'patch', 1);
          END IF;
          RETURN NULL;
        END $$;
      -- A bump changes state_version; a patch never does, so the bump does not re-enter here.
      CREATE TRIGGER sessions_state_version AFTER UPDATE OF record ON sessions
        FOR EACH ROW WHEN (OLD.state_version = NEW.state_version)
        EXECUTE FUNCTION colloquy_session_patched();
    `,
  },
  {
    version: 4,
    description:
      'hot-path writes: state versions in their column, search text from the store, platform ids apart, fewer index entries',
    // Version 3 mirrored the version into each session record, so every change rewrote the record
    // through jsonb, and compared two records as jsonb on every session write to find a patch. Now
    // the column alone holds the version (reads put it back into the record), a patch is found by
    // the store's code (`isPatchChange` of @colloquy/core, which it computes anyway), and an append
    // bumps the version in the statement that takes its seq numbers. Only a run's status change
    // still counts through a trigger.
    // A live session's write moved its entry in four updated_at indexes (live and all sessions, by
    // recency and by kind): the two over all sessions become indexes over archived sessions only, and
    // lists with archived sessions merge the live walk with the archived one. A run's status changes
    // moved its entry through the index of every run ever made; the active runs (the only ones listed
    // by status alone) get a small index of their own that a finished run leaves.
    // The search column stops being generated: the appending statement writes it from the text the
    // store's code picks (`searchableText`), as the SQL function did for each row, which cost more
    // than the insert itself. A message's platform id (set after the reply was sent) gets a column of
    // its own, so setting it neither rewrites the message nor recomputes its search entry.
    sql: `
      CREATE OR REPLACE FUNCTION colloquy_note_change(target text, change_kind text, n bigint) RETURNS void
        LANGUAGE plpgsql AS $$
        DECLARE v bigint;
        BEGIN
          IF n <= 0 THEN RETURN; END IF;
          UPDATE sessions SET state_version = state_version + n WHERE key = target
            RETURNING state_version INTO v;
          IF v IS NULL OR change_kind = 'message' THEN RETURN; END IF;
          INSERT INTO session_changes (session_key, version, kind)
            SELECT target, g, change_kind FROM generate_series(v - n + 1, v) AS g;
          DELETE FROM session_changes WHERE session_key = target AND version <= v - 512;
        END $$;
      -- A run's status change counts in its trigger's own body (no nested function call), and prunes
      -- the log at every 64th version: at most 512 + 63 rows per session, and readChanges ignores the
      -- rows below the window anyway.
      CREATE OR REPLACE FUNCTION colloquy_run_status_changed() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE v bigint;
        BEGIN
          IF NEW.status IN ('running', 'done', 'error', 'timeout', 'killed', 'interrupted')
             AND (TG_OP = 'INSERT' OR NEW.status IS DISTINCT FROM OLD.status) THEN
            UPDATE sessions SET state_version = state_version + 1 WHERE key = NEW.session_key
              RETURNING state_version INTO v;
            IF v IS NOT NULL THEN
              INSERT INTO session_changes (session_key, version, kind) VALUES (NEW.session_key, v, 'status');
              IF v % 64 = 0 THEN
                DELETE FROM session_changes WHERE session_key = NEW.session_key AND version <= v - 512;
              END IF;
            END IF;
          END IF;
          RETURN NULL;
        END $$;
      DROP TRIGGER sessions_state_version ON sessions;
      DROP FUNCTION colloquy_session_patched();
      DROP TRIGGER messages_state_version ON messages;
      DROP FUNCTION colloquy_messages_appended();
      UPDATE sessions SET record = (record::jsonb - 'stateVersion')::json
        WHERE json_typeof(record -> 'stateVersion') IS NOT NULL;
      ALTER TABLE messages ALTER COLUMN search DROP EXPRESSION;
      DROP FUNCTION colloquy_indexed_text(json);
      ALTER TABLE messages ADD COLUMN platform_message_id text;
      DROP INDEX sessions_recent;
      DROP INDEX sessions_by_kind;
      CREATE INDEX sessions_archived_recent ON sessions (updated_at DESC, key) WHERE archived_at IS NOT NULL;
      CREATE INDEX sessions_archived_by_kind ON sessions (kind, updated_at DESC, key)
        WHERE archived_at IS NOT NULL;
      DROP INDEX runs_by_status;
      CREATE INDEX runs_active ON runs (status, created_at DESC, run_id DESC) WHERE status IN ('queued', 'running');
    `,
  },
  {
    version: 5,
    description: "search entries are core's words, with the built-in secret patterns redacted before the cut",
    // Until now an entry was to_tsvector('simple', text) of the text cut first: secrets were indexed
    // (also the start of one that crossed the cut), and the database's parser and locale decided the
    // words (no words inside URLs, addresses or versions; in a C-locale database capitalised non-ASCII
    // words were never lower-cased, so never found). Every entry is rewritten from core's words, in
    // the store's code, with the GIN index dropped meanwhile (building it once beats updating it per row).
    async up(client) {
      await client.query('DROP INDEX messages_search');
      await reindexMessages(client);
      await client.query('CREATE INDEX messages_search ON messages USING gin (search)');
    },
  },
  {
    version: 6,
    description: 'forked sessions indexed',
    // The session tools list the forks in a scope (`onlyForked`) to count the ones the guard
    // refuses; forks are few, and this index finds them without walking the scope.
    sql: `CREATE INDEX sessions_forked ON sessions (updated_at DESC, key) WHERE (record ->> 'forked') = 'true';`,
  },
  {
    version: 7,
    description: 'MCP access tokens: the SHA-256 of each owner-issued token, never the token',
    sql: `
      CREATE TABLE mcp_tokens (
        id text COLLATE "C" PRIMARY KEY,
        hash text COLLATE "C" NOT NULL UNIQUE,
        agent_id text COLLATE "C" NOT NULL,
        created_at bigint NOT NULL,
        revoked_at bigint,
        n bigserial NOT NULL,
        record json NOT NULL
      );
      CREATE INDEX mcp_tokens_by_agent ON mcp_tokens (agent_id, created_at, n);
    `,
  },
  {
    version: 8,
    description:
      'turn operations as functions: commitInbound, endTurn and recordDeliveries in one statement each',
    sql: TURN_FUNCTIONS_SQL,
  },
  {
    version: 9,
    description: 'run status, times, attempts and delivery state in columns, written by column',
    sql: RUN_COLUMNS_SQL,
  },
  {
    version: 10,
    description:
      'a session record holding a NUL character: forks indexed without reading it as JSON, turns by rows',
    sql: NUL_SESSIONS_SQL,
  },
  {
    version: 11,
    description:
      "the turn functions' helpers in PL/pgSQL, so their statements are planned once per connection",
    sql: CACHED_PLANS_SQL,
  },
];

/**
 * Rewrites the search entry of every stored message from `searchVector`, in batches walked along the
 * primary key.
 */
async function reindexMessages(client: ClientBase): Promise<void> {
  type Row = { session_key: string; seq: string; message: TranscriptMessage };
  let after: Row | undefined;
  for (;;) {
    const batch = await client.query<Row>(
      `SELECT session_key, seq, message FROM messages
       ${after ? 'WHERE (session_key, seq) > ($2, $3)' : ''} ORDER BY session_key, seq LIMIT $1`,
      after ? [REINDEX_BATCH, after.session_key, after.seq] : [REINDEX_BATCH],
    );
    if (batch.rows.length === 0) return;
    await client.query(
      `UPDATE messages AS m SET search = v.search
       FROM unnest($1::text[], $2::bigint[], $3::tsvector[]) AS v(session_key, seq, search)
       WHERE m.session_key = v.session_key COLLATE "C" AND m.seq = v.seq`,
      [
        batch.rows.map((row) => row.session_key),
        batch.rows.map((row) => row.seq),
        batch.rows.map((row) => searchVector(row.message)),
      ],
    );
    after = batch.rows[batch.rows.length - 1];
  }
}

/** The schema version this build of `@colloquy/store-postgres` writes. */
export const POSTGRES_SCHEMA_VERSION: number = MIGRATIONS[MIGRATIONS.length - 1]!.version;

/** What {@link migrate} did. */
export interface MigrationResult {
  from: number;
  to: number;
}

/**
 * Brings the schema up to {@link POSTGRES_SCHEMA_VERSION} in one transaction, under an advisory
 * lock, so instances that start at once migrate one after another. A schema written by a newer
 * version is refused and left untouched.
 *
 * @param client - a connection whose `search_path` is the store's schema
 * @param schema - the schema name
 * @param target - the version to stop at (default {@link POSTGRES_SCHEMA_VERSION}); tests pass an
 *   older one to build the schemas earlier releases wrote
 * @throws ColloquyError `STORE_VERSION` when the schema is newer than this build
 */
export async function migrate(
  client: ClientBase,
  schema: string,
  target: number = POSTGRES_SCHEMA_VERSION,
): Promise<MigrationResult> {
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`colloquy-migrate:${schema}`]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`);
    await client.query('CREATE TABLE IF NOT EXISTS schema_version (version integer NOT NULL)');
    const found = await client.query<{ version: number }>('SELECT version FROM schema_version');
    const from = found.rows[0]?.version ?? 0;
    if (from > POSTGRES_SCHEMA_VERSION) {
      throw new ColloquyError(
        'STORE_VERSION',
        `The PostgreSQL schema "${schema}" was written by a newer Colloquy (schema version ${from}; this one knows up to ${POSTGRES_SCHEMA_VERSION}). Upgrade @colloquy/store-postgres; nothing was changed.`,
        { schema, version: from, known: POSTGRES_SCHEMA_VERSION },
      );
    }
    for (const step of MIGRATIONS) {
      if (step.version <= from || step.version > target) continue;
      if ('sql' in step) await client.query(step.sql);
      else await step.up(client);
    }
    if (found.rows.length === 0) {
      await client.query('INSERT INTO schema_version (version) VALUES ($1)', [target]);
    } else if (from < target) {
      await client.query('UPDATE schema_version SET version = $1', [target]);
    }
    await client.query('COMMIT');
    return { from, to: Math.max(from, target) };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
}

/** Quotes an SQL identifier. */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
