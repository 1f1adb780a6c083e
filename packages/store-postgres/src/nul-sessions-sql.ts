// Schema 10: a session record may hold a NUL character. Never edit a released step: a change is a new
// migration.
//
// PostgreSQL refuses a `\u0000` escape (22P05) in `jsonb` and in every JSON operator, also on `json`
// (`record ->> 'forked'` parses the whole record). Before this step a session whose display name held
// a NUL could not be written at all: schema 6's partial index `sessions_forked` read each written
// record with `->>`. Its condition now reads the record through `colloquy_nul_safe`, which turns each
// `\u0000` escape into `\u0020` (valid JSON whatever precedes it, and no field's value but a text's
// changes), so the index and `onlyForked` lists read such records too.
//
// The turn functions of schema 9 read and merge session records as `jsonb`. The two functions here
// run before them: when the stored record, or a session field the caller passes,
// holds a NUL, they write nothing and answer `by_rows`, and the store does that operation with core's
// row-level defaults (which merge in JavaScript and store `json` as written) in the same transaction.
// Otherwise they call the schema 9 function, unchanged. The session row is locked first, so no other
// transaction can store a NUL between the check and the write.

/** The SQL of schema 10. */
export const NUL_SESSIONS_SQL = `
  -- A JSON value any JSON operator can read: each NUL escape turned into a space.
  CREATE FUNCTION colloquy_nul_safe(value json) RETURNS json
    LANGUAGE sql IMMUTABLE AS $$ SELECT replace(value::text, '\\u0000', '\\u0020')::json $$;

  DROP INDEX sessions_forked;
  CREATE INDEX sessions_forked ON sessions (updated_at DESC, key)
    WHERE (colloquy_nul_safe(record) ->> 'forked') = 'true';

  -- True when the session's stored record, or one of the given JSON values, holds a NUL escape.
  CREATE FUNCTION colloquy_holds_nul(target text, VARIADIC given json[]) RETURNS boolean
    LANGUAGE sql STABLE AS $$
    SELECT EXISTS (SELECT 1 FROM unnest(given) AS g(value) WHERE strpos(g.value::text, '\\u0000') > 0)
      OR EXISTS (SELECT 1 FROM sessions s WHERE s.key = target AND strpos(s.record::text, '\\u0000') > 0)
  $$;

  CREATE FUNCTION colloquy_commit_inbound_or_rows(
      target text, created json, set_fields json, cleared text[],
      begin_set json, begin_cleared text[], input json, input_search tsvector,
      run_ids text[], run_session_keys text[], run_spawners text[], run_created_ats bigint[],
      run_statuses text[], run_updated_ats bigint[], run_started_ats bigint[], run_ended_ats bigint[],
      run_attempts integer[], run_pending_deliveries json[], run_deliveries json[], run_records json[])
    RETURNS TABLE (outcome text, session jsonb, version bigint, input_seq bigint)
    LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM 1 FROM sessions s WHERE s.key = target FOR UPDATE;
      IF colloquy_holds_nul(target, created, set_fields, begin_set) THEN
        RETURN QUERY SELECT 'by_rows', NULL::jsonb, NULL::bigint, NULL::bigint;
        RETURN;
      END IF;
      RETURN QUERY SELECT * FROM colloquy_commit_inbound(target, created::jsonb, set_fields::jsonb, cleared,
        begin_set::jsonb, begin_cleared, input, input_search, run_ids, run_session_keys, run_spawners,
        run_created_ats, run_statuses, run_updated_ats, run_started_ats, run_ended_ats, run_attempts,
        run_pending_deliveries, run_deliveries, run_records);
    END $$;

  CREATE FUNCTION colloquy_end_turn_or_rows(
      target text, final_message json, final_search tsvector,
      run_ids text[], run_session_keys text[], run_spawners text[], run_created_ats bigint[],
      run_statuses text[], run_updated_ats bigint[], run_started_ats bigint[], run_ended_ats bigint[],
      run_attempts integer[], run_metas_given boolean[], run_pending_deliveries json[], run_deliveries json[],
      run_records json[],
      set_fields json, cleared text[], added_usage jsonb, added_cost float8,
      delivery_run text, plan json, sending json)
    RETURNS TABLE (by_rows boolean, session jsonb, version bigint, ended_runs json, final_seq bigint,
      marked json, inbox_waiting boolean, watched boolean)
    LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM 1 FROM sessions s WHERE s.key = target FOR UPDATE;
      IF colloquy_holds_nul(target, set_fields) THEN
        RETURN QUERY SELECT true, NULL::jsonb, NULL::bigint, NULL::json, NULL::bigint, NULL::json,
          NULL::boolean, NULL::boolean;
        RETURN;
      END IF;
      RETURN QUERY SELECT false, e.* FROM colloquy_end_turn(target, final_message, final_search, run_ids,
        run_session_keys, run_spawners, run_created_ats, run_statuses, run_updated_ats, run_started_ats,
        run_ended_ats, run_attempts, run_metas_given, run_pending_deliveries, run_deliveries, run_records,
        set_fields::jsonb, cleared, added_usage, added_cost, delivery_run, plan, sending) AS e;
    END $$;
`;
