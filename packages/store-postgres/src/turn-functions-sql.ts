// Schema 8: the turn operations as SQL functions, so each is one statement (one round trip) that
// commits on its own, or joins the transaction it is called in. Never edit a released step: a change
// is a new migration that replaces the function.
//
// Each function does what core's default of the operation does with the row-level calls (see
// turn-operations.ts in @colloquy/core), in the same order, so the triggers and versions come out the
// same. A session patch arrives split by the store's code: `set`, the fields written (without `key`
// and `stateVersion`), and `cleared`, the fields a `null` removes.

/** The SQL of schema 8. */
export const TURN_FUNCTIONS_SQL = `
  -- The fields a patch change ignores: SESSION_BOOKKEEPING_FIELDS of @colloquy/core, frozen here.
  CREATE FUNCTION colloquy_is_patch_change(previous jsonb, next jsonb, fields text[]) RETURNS boolean
    LANGUAGE sql IMMUTABLE AS $$
    SELECT EXISTS (
      SELECT 1 FROM unnest(fields) AS f(name)
      WHERE f.name <> ALL (ARRAY['updatedAt', 'status', 'startedAt', 'endedAt', 'usage',
          'estimatedCostUsd', 'systemSent', 'abortedLastRun', 'meta', 'stateVersion'])
        AND previous -> f.name IS DISTINCT FROM next -> f.name)
  $$;

  -- The fields a patch names: those it sets and those it clears.
  CREATE FUNCTION colloquy_patch_fields(set_fields jsonb, cleared text[]) RETURNS text[]
    LANGUAGE sql IMMUTABLE AS $$
    SELECT ARRAY(SELECT jsonb_object_keys(set_fields)) || cleared
  $$;

  -- Writes a session's record over its row, with the columns queries use taken from it.
  CREATE FUNCTION colloquy_write_session(target text, rec jsonb) RETURNS void
    LANGUAGE sql AS $$
    UPDATE sessions SET session_id = rec ->> 'sessionId', agent_id = rec ->> 'agentId',
        kind = rec ->> 'kind', updated_at = (rec ->> 'updatedAt')::bigint,
        spawned_by = rec ->> 'spawnedBy', label = rec ->> 'label',
        archived_at = (rec ->> 'archivedAt')::bigint, record = rec::json
      WHERE key = target
  $$;

  -- Appends one message to a session's transcript, counted in its state version; returns its seq,
  -- or NULL when the session does not exist (nothing is appended).
  CREATE FUNCTION colloquy_append_message(target text, appended_message json, appended_search tsvector)
    RETURNS bigint
    LANGUAGE plpgsql AS $$
    DECLARE appended bigint;
    BEGIN
      UPDATE sessions SET next_seq = next_seq + 1, state_version = state_version + 1
        WHERE key = target RETURNING next_seq - 1 INTO appended;
      IF appended IS NOT NULL THEN
        INSERT INTO messages (session_key, seq, message, search) VALUES (target, appended, appended_message, appended_search);
      END IF;
      RETURN appended;
    END $$;

  -- Adds usage 'added' to the running total 'total' as addUsage of @colloquy/core does (the caller
  -- gives added.totalTokens already defaulted); contextTokens is the newer value, not a sum.
  CREATE FUNCTION colloquy_add_usage(total jsonb, added jsonb) RETURNS jsonb
    LANGUAGE sql IMMUTABLE AS $$
    SELECT jsonb_build_object(
        'inputTokens', coalesce((total ->> 'inputTokens')::numeric, 0) + (added ->> 'inputTokens')::numeric,
        'outputTokens', coalesce((total ->> 'outputTokens')::numeric, 0) + (added ->> 'outputTokens')::numeric,
        'totalTokens', coalesce((total ->> 'totalTokens')::numeric, 0) + (added ->> 'totalTokens')::numeric)
      || coalesce((SELECT jsonb_build_object('contextTokens', c.tokens) FROM (SELECT coalesce(
           nullif(added -> 'contextTokens', 'null'), nullif(total -> 'contextTokens', 'null')) AS tokens) AS c
           WHERE c.tokens IS NOT NULL), '{}')
  $$;

  -- commitInbound: a run whose id is stored is a duplicate (nothing written); else the session is
  -- created or patched (with the begun turn's fields when it begins: not yielded, empty inbox, and
  -- the caller offered it), then the input appended and the run inserted. The session is returned
  -- as written, with its version before the input and the run counted (as the default returns it).
  CREATE FUNCTION colloquy_commit_inbound(
      target text, created jsonb, set_fields jsonb, cleared text[], queued_run json,
      begin_set jsonb, begin_cleared text[], input json, input_search tsvector, begun_run json)
    RETURNS TABLE (outcome text, session jsonb, version bigint, input_seq bigint)
    LANGUAGE plpgsql AS $$
    DECLARE
      previous jsonb;
      written jsonb;
      fields text[];
      begins boolean;
      inserted_over boolean;
      stored_run json;
    BEGIN
      IF EXISTS (SELECT 1 FROM runs r WHERE r.run_id = queued_run ->> 'runId') THEN
        RETURN QUERY SELECT 'duplicate', NULL::jsonb, NULL::bigint, NULL::bigint;
        RETURN;
      END IF;
      SELECT s.record::jsonb INTO previous FROM sessions s WHERE s.key = target FOR UPDATE;
      begins := begun_run IS NOT NULL
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
        stored_run := begun_run;
      ELSE
        stored_run := queued_run;
      END IF;
      INSERT INTO runs (run_id, session_key, spawned_by, status, created_at, record)
        VALUES (stored_run ->> 'runId', stored_run ->> 'sessionKey', stored_run ->> 'spawnedBy',
          stored_run ->> 'status', (stored_run ->> 'createdAt')::bigint, stored_run);
      RETURN QUERY SELECT CASE WHEN begins THEN 'begun' ELSE 'queued' END, written, version, input_seq;
    END $$;

  -- endTurn: appends the final message (when the session exists), merges each run's patch (the
  -- delivery run's meta gets the plan, and the 'sending' mark when the session exists and the run
  -- has no delivery state), patches the session with its usage and cost added, and says whether
  -- its inbox holds entries and whether a watch of it is due. A missing run raises P0002 (its id as
  -- DETAIL), rolling the whole statement back.
  CREATE FUNCTION colloquy_end_turn(
      target text, final_message json, final_search tsvector, run_ids text[], run_patches jsonb[],
      set_fields jsonb, cleared text[], added_usage jsonb, added_cost float8,
      delivery_run text, plan jsonb, delivery_at bigint)
    RETURNS TABLE (session jsonb, version bigint, runs jsonb, final_seq bigint, marked jsonb,
      inbox_waiting boolean, watched boolean)
    LANGUAGE plpgsql AS $$
    DECLARE
      previous jsonb;
      written jsonb;
      stored jsonb;
      patch jsonb;
      meta jsonb;
      planned jsonb;
      fields text[];
      i integer;
    BEGIN
      runs := '[]';
      SELECT s.record::jsonb INTO previous FROM sessions s WHERE s.key = target FOR UPDATE;
      IF previous IS NOT NULL AND final_message IS NOT NULL THEN
        final_seq := colloquy_append_message(target, final_message, final_search);
      END IF;
      FOR i IN 1 .. coalesce(array_length(run_ids, 1), 0) LOOP
        SELECT r.record::jsonb INTO stored FROM runs AS r WHERE r.run_id = run_ids[i] FOR UPDATE;
        IF stored IS NULL THEN
          RAISE EXCEPTION 'No run "%".', run_ids[i] USING ERRCODE = 'P0002', DETAIL = run_ids[i];
        END IF;
        patch := run_patches[i];
        IF run_ids[i] = delivery_run THEN
          planned := plan || CASE WHEN final_seq IS NULL THEN '{}'::jsonb
            ELSE jsonb_build_object('finalSeq', final_seq) END;
          meta := coalesce(nullif(patch -> 'meta', 'null'), nullif(stored -> 'meta', 'null'), '{}');
          meta := meta || jsonb_build_object('pendingDelivery', planned);
          IF previous IS NOT NULL AND meta -> 'delivery' IS NULL THEN
            marked := planned;
            meta := meta || jsonb_build_object('delivery',
              jsonb_build_object('kind', planned -> 'kind', 'status', 'sending', 'at', delivery_at));
          END IF;
          patch := patch || jsonb_build_object('meta', meta);
        END IF;
        stored := stored || patch || jsonb_build_object('runId', run_ids[i]);
        UPDATE runs AS r SET session_key = stored ->> 'sessionKey', spawned_by = stored ->> 'spawnedBy',
            status = stored ->> 'status', created_at = (stored ->> 'createdAt')::bigint, record = stored::json
          WHERE r.run_id = run_ids[i];
        runs := runs || jsonb_build_array(stored);
      END LOOP;
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

  -- recordDeliveries: in order, each run's meta.delivery (a missing run is skipped), the platform
  -- id of a transcript message, and a transcript line (when the session exists).
  CREATE FUNCTION colloquy_record_deliveries(
      run_ids text[], session_keys text[], states jsonb[], seqs bigint[], platform_ids text[],
      lines json[], line_searches tsvector[])
    RETURNS void LANGUAGE plpgsql AS $$
    DECLARE i integer;
    BEGIN
      FOR i IN 1 .. coalesce(array_length(run_ids, 1), 0) LOOP
        UPDATE runs AS r SET record = (r.record::jsonb || jsonb_build_object('meta',
            coalesce(nullif(r.record::jsonb -> 'meta', 'null'), '{}')
              || jsonb_build_object('delivery', states[i])))::json
          WHERE r.run_id = run_ids[i];
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
