// Schema 9: a run's status, times, attempts and delivery state in columns of their own, written by
// column on each change (the `record` JSON keeps the rest; reads put the columns back, see
// run-columns.ts). Never edit a released step: a change is a new migration.
//
// Times are `bigint` (epoch milliseconds, as `created_at`), `attempts` an `integer`. The delivery state
// (`meta.pendingDelivery`, `meta.delivery`) is `json`, like `record`: the store writes and returns it
// whole and never looks inside it in SQL, and `json` is stored and returned as written, with no
// conversion to and from `jsonb`'s binary form on each mark and each read.
//
// Nothing here converts a record, a run patch, a planned reply or a delivery state to `jsonb` or reads
// into it with a JSON operator: PostgreSQL refuses a `\u0000` escape in both (a text may hold a NUL
// character, and `json` stores it as written). Runs arrive split by the store's code instead: one array
// per column, and the JSON of the rest. A JSON merge goes through `colloquy_merge_json`, which leaves a
// record that holds a NUL alone.
//
// The three turn functions replace those of schema 8 (turn-functions-sql.ts) and do what they did for
// sessions and transcripts, unchanged; only how they write runs changed.

/** The SQL of schema 9. */
export const RUN_COLUMNS_SQL = `
  ALTER TABLE runs ADD COLUMN updated_at bigint, ADD COLUMN started_at bigint, ADD COLUMN ended_at bigint,
    ADD COLUMN attempts integer, ADD COLUMN pending_delivery json, ADD COLUMN delivery json;

  -- A whole JSON number within the bound, as numeric; NULL for anything else. For the move below only.
  CREATE FUNCTION colloquy_whole_number(value json, bound numeric) RETURNS numeric
    LANGUAGE sql IMMUTABLE AS $$
    SELECT v.n FROM (SELECT (value #>> '{}')::numeric AS n WHERE json_typeof(value) = 'number') AS v
    WHERE v.n = trunc(v.n) AND abs(v.n) <= bound
  $$;

  -- The stored runs' values move to the columns and leave the JSON (status has had its column since
  -- schema 1). A value that does not fit its column, and every value of a record holding a NUL (which
  -- no JSON operator reads), stay in the JSON: reads take a column over the JSON only when it is set.
  WITH moved AS (
    SELECT run_id,
      colloquy_whole_number(record -> 'updatedAt', 9223372036854775807) AS updated_at,
      colloquy_whole_number(record -> 'startedAt', 9223372036854775807) AS started_at,
      colloquy_whole_number(record -> 'endedAt', 9223372036854775807) AS ended_at,
      colloquy_whole_number(record -> 'attempts', 2147483647) AS attempts,
      json_typeof(record -> 'meta') = 'object' AS meta_object
    FROM runs WHERE strpos(record::text, '\\u0000') = 0
  )
  UPDATE runs AS r SET updated_at = m.updated_at, started_at = m.started_at, ended_at = m.ended_at,
      attempts = m.attempts,
      pending_delivery = CASE WHEN m.meta_object THEN r.record -> 'meta' -> 'pendingDelivery' END,
      delivery = CASE WHEN m.meta_object THEN r.record -> 'meta' -> 'delivery' END,
      record = (CASE WHEN m.meta_object THEN r.record::jsonb #- '{meta,pendingDelivery}' #- '{meta,delivery}'
          ELSE r.record::jsonb END
        - array_remove(ARRAY['status',
            CASE WHEN m.updated_at IS NOT NULL THEN 'updatedAt' END,
            CASE WHEN m.started_at IS NOT NULL THEN 'startedAt' END,
            CASE WHEN m.ended_at IS NOT NULL THEN 'endedAt' END,
            CASE WHEN m.attempts IS NOT NULL THEN 'attempts' END], NULL))::json
    FROM moved AS m WHERE r.run_id = m.run_id;
  DROP FUNCTION colloquy_whole_number(json, numeric);

  -- The fields of JSON object 'patch' set over those of 'stored', as a JSON object. When either holds a
  -- NUL (which jsonb refuses), the patch's fields are appended after the stored ones as text: a key may
  -- then repeat, and its last value is the one a JSON parser (JSON.parse) keeps. One expression, so the
  -- planner inlines it into the statement that calls it.
  CREATE FUNCTION colloquy_merge_json(stored json, patch json) RETURNS json
    LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE
      WHEN strpos(stored::text, '\\u0000') = 0 AND strpos(patch::text, '\\u0000') = 0
        THEN (stored::jsonb || patch::jsonb)::json
      WHEN rtrim(left(rtrim(stored::text), -1)) = '{' THEN patch
      WHEN ltrim(substr(ltrim(patch::text), 2)) = '}' THEN stored
      ELSE (rtrim(left(rtrim(stored::text), -1)) || ',' || ltrim(substr(ltrim(patch::text), 2)))::json
    END
  $$;

  DROP FUNCTION colloquy_commit_inbound(text, jsonb, jsonb, text[], json, jsonb, text[], json, tsvector, json);
  DROP FUNCTION colloquy_end_turn(text, json, tsvector, text[], jsonb[], jsonb, text[], jsonb, float8, text,
    jsonb, bigint);
  DROP FUNCTION colloquy_record_deliveries(text[], text[], jsonb[], bigint[], text[], json[], tsvector[]);

  -- commitInbound, as in schema 8. The runs come as one array per column: the queued run first, then
  -- the begun run when the caller offered to begin the turn; the one stored is the begun run when the
  -- turn begins, else the queued one.
  CREATE FUNCTION colloquy_commit_inbound(
      target text, created jsonb, set_fields jsonb, cleared text[],
      begin_set jsonb, begin_cleared text[], input json, input_search tsvector,
      run_ids text[], run_session_keys text[], run_spawners text[], run_created_ats bigint[],
      run_statuses text[], run_updated_ats bigint[], run_started_ats bigint[], run_ended_ats bigint[],
      run_attempts integer[], run_pending_deliveries json[], run_deliveries json[], run_records json[])
    RETURNS TABLE (outcome text, session jsonb, version bigint, input_seq bigint)
    LANGUAGE plpgsql AS $$
    DECLARE
      previous jsonb;
      written jsonb;
      fields text[];
      begins boolean;
      inserted_over boolean;
      k integer;
    BEGIN
      IF EXISTS (SELECT 1 FROM runs r WHERE r.run_id = run_ids[1]) THEN
        RETURN QUERY SELECT 'duplicate', NULL::jsonb, NULL::bigint, NULL::bigint;
        RETURN;
      END IF;
      SELECT s.record::jsonb INTO previous FROM sessions s WHERE s.key = target FOR UPDATE;
      begins := array_length(run_ids, 1) > 1
        AND coalesce(jsonb_typeof(previous -> 'meta' -> 'yield') NOT IN ('object', 'array'), true)
        AND NOT EXISTS (SELECT 1 FROM inbox i WHERE i.session_key = target AND i.consumed_at IS NULL);
      IF previous IS NOT NULL THEN
        written := (previous - cleared) || set_fields;
        fields := colloquy_patch_fields(set_fields, cleared);
        IF begins THEN
          written := (written - begin_cleared) || begin_set;
          fields := fields || colloquy_patch_fields(begin_set, begin_cleared);
        END IF;
        PERFORM colloquy_write_session(target, written);
        IF colloquy_is_patch_change(previous, written, fields) THEN
          PERFORM colloquy_note_change(target, 'patch', 1);
        END IF;
      ELSE
        written := created - 'stateVersion';
        IF begins THEN written := (written - begin_cleared) || begin_set; END IF;
        INSERT INTO sessions (key, session_id, agent_id, kind, updated_at, spawned_by, label, archived_at, record)
          VALUES (target, written ->> 'sessionId', written ->> 'agentId', written ->> 'kind',
            (written ->> 'updatedAt')::bigint, written ->> 'spawnedBy', written ->> 'label',
            (written ->> 'archivedAt')::bigint, written::json)
          ON CONFLICT (key) DO UPDATE SET session_id = excluded.session_id, agent_id = excluded.agent_id,
            kind = excluded.kind, updated_at = excluded.updated_at, spawned_by = excluded.spawned_by,
            label = excluded.label, archived_at = excluded.archived_at, record = excluded.record
          RETURNING xmax::text <> '0' INTO inserted_over;
        -- Another instance created the session since this statement looked: its watchers hear of it.
        IF inserted_over THEN PERFORM colloquy_note_change(target, 'patch', 1); END IF;
      END IF;
      SELECT s.state_version INTO version FROM sessions s WHERE s.key = target;
      IF begins THEN
        input_seq := colloquy_append_message(target, input, input_search);
        k := 2;
      ELSE
        k := 1;
      END IF;
      INSERT INTO runs (run_id, session_key, spawned_by, created_at, status, updated_at, started_at, ended_at,
          attempts, pending_delivery, delivery, record)
        VALUES (run_ids[k], run_session_keys[k], run_spawners[k], run_created_ats[k], run_statuses[k],
          run_updated_ats[k], run_started_ats[k], run_ended_ats[k], run_attempts[k],
          run_pending_deliveries[k], run_deliveries[k], run_records[k]);
      RETURN QUERY SELECT CASE WHEN begins THEN 'begun' ELSE 'queued' END, written, version, input_seq;
    END $$;

  -- endTurn, as in schema 8. Each run's patch comes as one array per column (NULL: not in the patch),
  -- whether it holds a meta (which replaces the stored one, its delivery fields going to their
  -- columns), and the JSON of its other fields (NULL: none), merged over the stored record. The
  -- delivery run's pending_delivery gets the plan (with finalSeq when the final message was appended),
  -- and its delivery the 'sending' state when the session exists and the run has no delivery state. A
  -- missing run raises P0002 (its id as DETAIL), rolling the whole statement back. The runs come back
  -- as the columns run-columns.ts reads.
  CREATE FUNCTION colloquy_end_turn(
      target text, final_message json, final_search tsvector,
      run_ids text[], run_session_keys text[], run_spawners text[], run_created_ats bigint[],
      run_statuses text[], run_updated_ats bigint[], run_started_ats bigint[], run_ended_ats bigint[],
      run_attempts integer[], run_metas_given boolean[], run_pending_deliveries json[], run_deliveries json[],
      run_records json[],
      set_fields jsonb, cleared text[], added_usage jsonb, added_cost float8,
      delivery_run text, plan json, sending json)
    RETURNS TABLE (session jsonb, version bigint, ended_runs json, final_seq bigint, marked json,
      inbox_waiting boolean, watched boolean)
    LANGUAGE plpgsql AS $$
    DECLARE
      previous jsonb;
      written jsonb;
      fields text[];
      planned json;
      mark boolean;
      ended json;
      collected json[] := '{}';
      i integer;
    BEGIN
      SELECT s.record::jsonb INTO previous FROM sessions s WHERE s.key = target FOR UPDATE;
      IF previous IS NOT NULL AND final_message IS NOT NULL THEN
        final_seq := colloquy_append_message(target, final_message, final_search);
      END IF;
      FOR i IN 1 .. coalesce(array_length(run_ids, 1), 0) LOOP
        planned := NULL;
        mark := false;
        IF run_ids[i] = delivery_run THEN
          planned := CASE WHEN final_seq IS NULL THEN plan
            ELSE colloquy_merge_json(plan, json_build_object('finalSeq', final_seq)) END;
          IF previous IS NOT NULL THEN
            IF run_metas_given[i] THEN
              mark := run_deliveries[i] IS NULL;
            ELSE
              SELECT r.delivery IS NULL INTO mark FROM runs AS r WHERE r.run_id = run_ids[i] FOR UPDATE;
              mark := coalesce(mark, false);
            END IF;
          END IF;
          IF mark THEN marked := planned; END IF;
        END IF;
        UPDATE runs AS r SET
            status = coalesce(run_statuses[i], r.status),
            updated_at = coalesce(run_updated_ats[i], r.updated_at),
            started_at = coalesce(run_started_ats[i], r.started_at),
            ended_at = coalesce(run_ended_ats[i], r.ended_at),
            attempts = coalesce(run_attempts[i], r.attempts),
            session_key = coalesce(run_session_keys[i], r.session_key),
            spawned_by = coalesce(run_spawners[i], r.spawned_by),
            created_at = coalesce(run_created_ats[i], r.created_at),
            pending_delivery = CASE WHEN planned IS NOT NULL THEN planned
              WHEN run_metas_given[i] THEN run_pending_deliveries[i] ELSE r.pending_delivery END,
            delivery = CASE WHEN mark THEN sending
              WHEN run_metas_given[i] THEN run_deliveries[i] ELSE r.delivery END,
            record = CASE WHEN run_records[i] IS NULL THEN r.record
              ELSE colloquy_merge_json(r.record, run_records[i]) END
          WHERE r.run_id = run_ids[i]
          RETURNING json_build_object('record', r.record, 'status', r.status, 'updated_at', r.updated_at,
            'started_at', r.started_at, 'ended_at', r.ended_at, 'attempts', r.attempts,
            'pending_delivery', r.pending_delivery::text, 'delivery', r.delivery::text) INTO ended;
        IF ended IS NULL THEN
          RAISE EXCEPTION 'No run "%".', run_ids[i] USING ERRCODE = 'P0002', DETAIL = run_ids[i];
        END IF;
        collected := collected || ended;
      END LOOP;
      ended_runs := array_to_json(collected);
      IF previous IS NOT NULL THEN
        written := (previous - cleared) || set_fields;
        fields := colloquy_patch_fields(set_fields, cleared);
        IF added_usage IS NOT NULL THEN
          written := written || jsonb_build_object('usage', colloquy_add_usage(previous -> 'usage', added_usage));
        END IF;
        IF added_cost IS NOT NULL THEN
          written := written || jsonb_build_object('estimatedCostUsd',
            coalesce((previous ->> 'estimatedCostUsd')::float8, 0) + added_cost);
        END IF;
        PERFORM colloquy_write_session(target, written);
        IF colloquy_is_patch_change(previous, written, fields) THEN
          PERFORM colloquy_note_change(target, 'patch', 1);
        END IF;
        SELECT s.state_version INTO version FROM sessions s WHERE s.key = target;
        session := written;
      END IF;
      inbox_waiting := previous IS NOT NULL
        AND EXISTS (SELECT 1 FROM inbox i WHERE i.session_key = target AND i.consumed_at IS NULL);
      watched := EXISTS (SELECT 1 FROM session_watches w JOIN sessions s ON s.key = w.target_key
        WHERE w.target_key = target AND s.state_version > w.after_version);
      RETURN NEXT;
    END $$;

  -- recordDeliveries, as in schema 8: each run's delivery column (a missing run is skipped), the
  -- platform id of a transcript message, and a transcript line (when the session exists), in order.
  CREATE FUNCTION colloquy_record_deliveries(
      run_ids text[], session_keys text[], states json[], seqs bigint[], platform_ids text[],
      lines json[], line_searches tsvector[])
    RETURNS void LANGUAGE plpgsql AS $$
    DECLARE i integer;
    BEGIN
      FOR i IN 1 .. coalesce(array_length(run_ids, 1), 0) LOOP
        UPDATE runs AS r SET delivery = states[i] WHERE r.run_id = run_ids[i];
        IF seqs[i] IS NOT NULL THEN
          UPDATE messages AS m SET platform_message_id = platform_ids[i]
            WHERE m.session_key = session_keys[i] AND m.seq = seqs[i];
        END IF;
        IF lines[i] IS NOT NULL THEN
          PERFORM colloquy_append_message(session_keys[i], lines[i], line_searches[i]);
        END IF;
      END LOOP;
    END $$;
`;
