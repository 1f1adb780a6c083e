// Schema 11: the SQL-language helpers of the turn functions, as PL/pgSQL. Never edit a released step:
// a change is a new migration.
//
// PostgreSQL inlines a SQL-language function into its caller only when its body is one expression
// without a sub-select (`colloquy_merge_json`, `colloquy_nul_safe`). Any other SQL-language function
// plans its body again on every call made in a new transaction: called from PL/pgSQL, its plan lives in
// the transaction's expression state, and each turn operation is a transaction of its own. Measured
// with `pg_stat_statements` (`track = all`, `track_planning = on`) over 4,000 turns of the runtime
// bench, planning those bodies took about 0.7 ms of the server's time per turn, more than any
// statement of the turn took to run: `colloquy_holds_nul` 155 µs a call, the `UPDATE` of
// `colloquy_write_session` 123 µs, `colloquy_is_patch_change` 58 µs, `colloquy_add_usage` 50 µs.
// PL/pgSQL prepares each statement once per connection and keeps its plan, so these bodies are
// planned once per connection. Same names, arguments, results and behaviour; only the language changed.

/** The SQL of schema 11. */
export const CACHED_PLANS_SQL = `
  CREATE OR REPLACE FUNCTION colloquy_is_patch_change(previous jsonb, next jsonb, fields text[]) RETURNS boolean
    LANGUAGE plpgsql IMMUTABLE AS $$
    BEGIN
      RETURN EXISTS (
        SELECT 1 FROM unnest(fields) AS f(name)
        WHERE f.name <> ALL (ARRAY['updatedAt', 'status', 'startedAt', 'endedAt', 'usage',
            'estimatedCostUsd', 'systemSent', 'abortedLastRun', 'meta', 'stateVersion'])
          AND previous -> f.name IS DISTINCT FROM next -> f.name);
    END $$;

  CREATE OR REPLACE FUNCTION colloquy_patch_fields(set_fields jsonb, cleared text[]) RETURNS text[]
    LANGUAGE plpgsql IMMUTABLE AS $$
    BEGIN
      RETURN ARRAY(SELECT jsonb_object_keys(set_fields)) || cleared;
    END $$;

  CREATE OR REPLACE FUNCTION colloquy_write_session(target text, rec jsonb) RETURNS void
    LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE sessions SET session_id = rec ->> 'sessionId', agent_id = rec ->> 'agentId',
          kind = rec ->> 'kind', updated_at = (rec ->> 'updatedAt')::bigint,
          spawned_by = rec ->> 'spawnedBy', label = rec ->> 'label',
          archived_at = (rec ->> 'archivedAt')::bigint, record = rec::json
        WHERE key = target;
    END $$;

  CREATE OR REPLACE FUNCTION colloquy_add_usage(total jsonb, added jsonb) RETURNS jsonb
    LANGUAGE plpgsql IMMUTABLE AS $$
    DECLARE tokens jsonb := coalesce(nullif(added -> 'contextTokens', 'null'), nullif(total -> 'contextTokens', 'null'));
    BEGIN
      RETURN jsonb_build_object(
          'inputTokens', coalesce((total ->> 'inputTokens')::numeric, 0) + (added ->> 'inputTokens')::numeric,
          'outputTokens', coalesce((total ->> 'outputTokens')::numeric, 0) + (added ->> 'outputTokens')::numeric,
          'totalTokens', coalesce((total ->> 'totalTokens')::numeric, 0) + (added ->> 'totalTokens')::numeric)
        || CASE WHEN tokens IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('contextTokens', tokens) END;
    END $$;

  CREATE OR REPLACE FUNCTION colloquy_holds_nul(target text, VARIADIC given json[]) RETURNS boolean
    LANGUAGE plpgsql STABLE AS $$
    BEGIN
      RETURN EXISTS (SELECT 1 FROM unnest(given) AS g(value) WHERE strpos(g.value::text, '\\u0000') > 0)
        OR EXISTS (SELECT 1 FROM sessions s WHERE s.key = target AND strpos(s.record::text, '\\u0000') > 0);
    END $$;
`;
