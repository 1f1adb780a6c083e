import { foldAlsoKeys, type SessionListQuery, spawnerKeys } from '@colloquy/core/store';

/** One SQL statement of a plan with its parameters. */
export interface PlanPart {
  sql: string;
  params: unknown[];
}

/**
 * How to answer a session list or count: one statement per part. Parts never overlap, so counts
 * add up; a list always has at most one part.
 */
export interface SessionListPlan {
  parts: PlanPart[];
}

const EMPTY: SessionListPlan = { parts: [] };

/**
 * The condition of forked sessions, as the partial index `sessions_forked` (schema 10) writes it: a
 * query must spell it the same way for SQLite to use that index.
 */
export const FORKED_SQL = "json_extract(record, '$.forked') = 1";

/**
 * Turns a {@link SessionListQuery} into SQL that walks indexes in `updated_at DESC, key` order and
 * stops after `offset + limit` rows, so a list costs O(result), not O(store):
 *
 * - `keys`: primary-key lookups, sorted afterwards (at most `keys.length` rows);
 * - `sessionId`, `label`: the unique `session_id` index or the label index, sorted afterwards;
 * - `spawnedBy`: the `sessions_by_spawner` index (with several spawners, every child of theirs is
 *   read, then sorted);
 * - `onlyForked`: the `sessions_forked` index;
 * - otherwise the recency index of live sessions, or with `kinds` one walk of the per-kind index for
 *   each kind; `includeArchived` adds the same walks over the archived sessions' indexes.
 *
 * Several walks never overlap (one kind each, one side of `archived_at` each). A list merges them in
 * SQL (`UNION ALL ... ORDER BY`, which SQLite runs as a merge of ordered streams), so it reads about
 * `limit` rows whatever their number; a count is one part per walk. Other filters are checked on the
 * rows the walk meets. `INDEXED BY` pins each choice, so a plan never degrades to a table scan
 * whatever statistics SQLite has.
 *
 * @param mode - `rows` selects `key, updated_at, record`; `count` selects `count(*)` and ignores `limit`
 * @param now - the clock for `activeMinutes`
 */
export function planSessionList(
  asked: SessionListQuery,
  mode: 'rows' | 'count',
  now: number,
): SessionListPlan {
  const query = foldAlsoKeys(asked);
  const spawners = spawnerKeys(query);
  if (query.keys?.length === 0 || query.agentIds?.length === 0 || spawners?.length === 0) return EMPTY;
  const limit = mode === 'rows' ? sqlLimit(query.limit) : -1;
  if (limit === 0) return EMPTY;

  const live = !query.includeArchived;
  const kinds = [...new Set(query.kinds ?? [])];
  const filters: string[] = [];
  const params: unknown[] = [];
  let sides: Side[];
  let perKind = false;

  const pointLookup = query.sessionId !== undefined || query.label !== undefined;
  if (query.sessionId !== undefined) {
    filters.push('session_id = ?');
    params.push(query.sessionId);
  }
  if (query.label !== undefined) {
    filters.push('label = ?');
    params.push(query.label);
  }
  const scope: string[] = [];
  const scopeParams: unknown[] = [];
  if (query.keys !== undefined) {
    scope.push('key IN (SELECT value FROM json_each(?))');
    scopeParams.push(JSON.stringify([...new Set(query.keys)]));
    sides = [unindexed(live)];
  } else if (pointLookup) {
    // The unique session_id index or the label index finds the few rows; no walk needed.
    sides = [unindexed(live)];
  } else if (spawners !== undefined) {
    sides = [{ index: 'sessions_by_spawner', where: live ? [LIVE.where] : [] }];
  } else if (query.onlyForked) {
    sides = [{ index: 'sessions_forked', where: live ? [LIVE.where] : [] }];
  } else {
    perKind = kinds.length > 0;
    sides = (live ? [LIVE] : [LIVE, ARCHIVED]).map((side) => ({
      index: perKind ? side.byKind : side.recent,
      where: [side.where],
    }));
  }

  if (spawners?.length === 1) {
    filters.push('spawned_by = ?');
    params.push(spawners[0]);
  } else if (spawners !== undefined) {
    // One probe of the spawner index per key; the rows are sorted afterwards.
    filters.push('spawned_by IN (SELECT value FROM json_each(?))');
    params.push(JSON.stringify(spawners));
  }
  if (query.onlyForked) filters.push(FORKED_SQL);
  if (kinds.length > 0 && !perKind) {
    filters.push('kind IN (SELECT value FROM json_each(?))');
    params.push(JSON.stringify(kinds));
  }
  if (query.activeMinutes !== undefined) {
    filters.push('updated_at >= ?');
    params.push(now - query.activeMinutes * 60_000);
  }
  if (query.agentIds !== undefined) {
    scope.push('agent_id IN (SELECT value FROM json_each(?))');
    scopeParams.push(JSON.stringify([...new Set(query.agentIds)]));
  }
  if (query.alsoKeys !== undefined) {
    // Left after folding only beside `keys` or `agentIds`: `(keys AND agentIds) OR key IN alsoKeys`.
    filters.push(`(${scope.join(' AND ')} OR key IN (SELECT value FROM json_each(?)))`);
    params.push(...scopeParams, JSON.stringify([...new Set(query.alsoKeys)]));
  } else {
    filters.push(...scope);
    params.push(...scopeParams);
  }

  const select = mode === 'rows' ? 'SELECT key, updated_at, record, state_version' : 'SELECT count(*)';
  const walks: PlanPart[] = sides.flatMap((side) => {
    const from = side.index === undefined ? 'FROM sessions' : `FROM sessions INDEXED BY ${side.index}`;
    const walk = (extra: string[], extraParams: unknown[]): PlanPart => {
      const all = [...extra, ...side.where, ...filters];
      const where = all.length > 0 ? ` WHERE ${all.join(' AND ')}` : '';
      return { sql: `${select} ${from}${where}`, params: [...extraParams, ...params] };
    };
    return perKind ? kinds.map((kind) => walk(['kind = ?'], [kind])) : [walk([], [])];
  });

  if (mode === 'count') return { parts: walks };
  const order = ' ORDER BY updated_at DESC, key LIMIT ? OFFSET ?';
  const offset = query.offset !== undefined && query.offset > 0 ? Math.floor(query.offset) : 0;
  return {
    parts: [
      {
        sql: walks.map((w) => w.sql).join(' UNION ALL ') + order,
        params: [...walks.flatMap((w) => w.params), limit, offset],
      },
    ],
  };
}

/** One side of `archived_at`: its condition and the indexes over its sessions. */
interface SessionIndexes {
  where: string;
  recent: string;
  byKind: string;
}

const LIVE: SessionIndexes = {
  where: 'archived_at IS NULL',
  recent: 'sessions_live_recent',
  byKind: 'sessions_live_by_kind',
};

const ARCHIVED: SessionIndexes = {
  where: 'archived_at IS NOT NULL',
  recent: 'sessions_archived_recent',
  byKind: 'sessions_archived_by_kind',
};

/** A walk's index (none: SQLite's choice for a point lookup) and its `archived_at` condition. */
interface Side {
  index?: string;
  where: string[];
}

function unindexed(live: boolean): Side {
  return { where: live ? [LIVE.where] : [] };
}

/**
 * A `limit` as SQLite's `LIMIT` wants it, with `MemoryStore`'s meaning: absent or infinite is -1
 * (no limit), negative or NaN is 0, fractions round down.
 */
export function sqlLimit(limit: number | undefined): number {
  if (limit === undefined || limit === Number.POSITIVE_INFINITY) return -1;
  return limit > 0 ? Math.floor(limit) : 0;
}
