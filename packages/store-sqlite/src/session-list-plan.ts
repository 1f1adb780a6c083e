import type { SessionListQuery } from '@colloquy/core';

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
 * Turns a {@link SessionListQuery} into SQL that walks an index in `updated_at DESC, key` order and
 * stops after `offset + limit` rows, so a list costs O(result), not O(store):
 *
 * - `keys`: primary-key lookups, sorted afterwards (at most `keys.length` rows);
 * - `sessionId`, `label`: the unique `session_id` index or the label index, sorted afterwards;
 * - `spawnedBy`: the `sessions_by_spawner` index;
 * - `kinds`: one walk of the per-kind index for each kind; a list merges the walks in SQL
 *   (`UNION ALL ... ORDER BY`, which SQLite runs as a merge of ordered streams), so it reads about
 *   `limit` rows whatever the number of kinds;
 * - otherwise the recency index (live sessions only, unless `includeArchived`).
 *
 * Other filters are checked on the rows the walk meets. `INDEXED BY` pins each choice, so a plan
 * never degrades to a table scan whatever statistics SQLite has.
 *
 * @param mode - `rows` selects `key, updated_at, record`; `count` selects `count(*)` and ignores `limit`
 * @param now - the clock for `activeMinutes`
 */
export function planSessionList(
  query: SessionListQuery,
  mode: 'rows' | 'count',
  now: number,
): SessionListPlan {
  if (query.keys?.length === 0 || query.agentIds?.length === 0) return EMPTY;
  const limit = mode === 'rows' ? sqlLimit(query.limit) : -1;
  if (limit === 0) return EMPTY;

  const live = !query.includeArchived;
  const kinds = [...new Set(query.kinds ?? [])];
  const filters: string[] = [];
  const params: unknown[] = [];
  let index: string | undefined;
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
  if (query.keys !== undefined) {
    filters.push('key IN (SELECT value FROM json_each(?))');
    params.push(JSON.stringify([...new Set(query.keys)]));
  } else if (pointLookup) {
    // The unique session_id index or the label index finds the few rows; no walk needed.
  } else if (query.spawnedBy !== undefined) {
    index = 'sessions_by_spawner';
  } else if (kinds.length > 0) {
    index = live ? 'sessions_live_by_kind' : 'sessions_by_kind';
    perKind = true;
  } else {
    index = live ? 'sessions_live_recent' : 'sessions_recent';
  }

  if (query.spawnedBy !== undefined) {
    filters.push('spawned_by = ?');
    params.push(query.spawnedBy);
  }
  if (live) filters.push('archived_at IS NULL');
  if (kinds.length > 0 && !perKind) {
    filters.push('kind IN (SELECT value FROM json_each(?))');
    params.push(JSON.stringify(kinds));
  }
  if (query.activeMinutes !== undefined) {
    filters.push('updated_at >= ?');
    params.push(now - query.activeMinutes * 60_000);
  }
  if (query.agentIds !== undefined) {
    filters.push('agent_id IN (SELECT value FROM json_each(?))');
    params.push(JSON.stringify([...new Set(query.agentIds)]));
  }

  const select = mode === 'rows' ? 'SELECT key, updated_at, record, state_version' : 'SELECT count(*)';
  const from = index === undefined ? 'FROM sessions' : `FROM sessions INDEXED BY ${index}`;
  const arm = (extra: string[]): string => {
    const all = [...extra, ...filters];
    return `${select} ${from}${all.length > 0 ? ` WHERE ${all.join(' AND ')}` : ''}`;
  };
  const order = ' ORDER BY updated_at DESC, key LIMIT ? OFFSET ?';
  const offset = query.offset !== undefined && query.offset > 0 ? Math.floor(query.offset) : 0;

  if (perKind && mode === 'count') {
    const sql = arm(['kind = ?']);
    return { parts: kinds.map((kind) => ({ sql, params: [kind, ...params] })) };
  }
  if (perKind) {
    const sql = kinds.map(() => arm(['kind = ?'])).join(' UNION ALL ') + order;
    return { parts: [{ sql, params: [...kinds.flatMap((kind) => [kind, ...params]), limit, offset] }] };
  }
  if (mode === 'count') return { parts: [{ sql: arm([]), params }] };
  return { parts: [{ sql: arm([]) + order, params: [...params, limit, offset] }] };
}

/**
 * A `limit` as SQLite's `LIMIT` wants it, with `MemoryStore`'s meaning: absent or infinite is -1
 * (no limit), negative or NaN is 0, fractions round down.
 */
export function sqlLimit(limit: number | undefined): number {
  if (limit === undefined || limit === Number.POSITIVE_INFINITY) return -1;
  return limit > 0 ? Math.floor(limit) : 0;
}
