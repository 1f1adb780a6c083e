import { foldAlsoKeys, type SessionListQuery, spawnerKeys } from '@colloquy/core/store';

/** The condition of live sessions, as the partial indexes of schema 4 write it. */
const LIVE = 'archived_at IS NULL';
/** The condition of archived sessions, as the partial indexes of schema 4 write it. */
const ARCHIVED = 'archived_at IS NOT NULL';

/**
 * The condition of forked sessions, as the partial index `sessions_forked` (schema 10) writes it: a
 * query spells it the same way so the planner can use that index. `colloquy_nul_safe` lets it read a
 * record that holds a NUL character, which a JSON operator refuses.
 */
export const FORKED_SQL = "(colloquy_nul_safe(record) ->> 'forked') = 'true'";

/** One statement and its parameters. */
export interface Sql {
  text: string;
  values: unknown[];
}

/**
 * Turns a session list query into SQL (rows: `record` and `state_version`) that walks indexes in
 * `updated_at DESC, key` order and stops after `limit` rows, so a list costs O(result). Live and
 * archived sessions have indexes of their own (schema 4), and so does each kind: a list walks one
 * index per kind and side (live, and archived with `includeArchived`), merged (`UNION ALL` of limited
 * arms, then the outer order and limit), or the spawner index, or the key, session id and label
 * lookups. The other filters are checked on the rows a walk meets.
 *
 * @param mode - `rows` selects records; `count` counts (ignoring `limit`)
 * @param now - the clock for `activeMinutes`
 * @returns the statement, or `undefined` when nothing can match
 */
export function sessionListSql(
  asked: SessionListQuery,
  mode: 'rows' | 'count',
  now: number,
): Sql | undefined {
  const query = foldAlsoKeys(asked);
  const spawners = spawnerKeys(query);
  if (query.keys?.length === 0 || query.agentIds?.length === 0 || spawners?.length === 0) return undefined;
  const limit = mode === 'rows' ? sqlLimit(query.limit) : -1;
  if (limit === 0) return undefined;
  const values: unknown[] = [];
  const param = (value: unknown): string => {
    values.push(value);
    return `$${values.length}`;
  };
  const filters: string[] = [];
  if (query.sessionId !== undefined) filters.push(`session_id = ${param(query.sessionId)}`);
  if (query.label !== undefined) filters.push(`label = ${param(query.label)}`);
  if (spawners?.length === 1) filters.push(`spawned_by = ${param(spawners[0])}`);
  else if (spawners !== undefined) filters.push(`spawned_by = ANY(${param(spawners)})`);
  if (query.onlyForked) filters.push(FORKED_SQL);
  if (query.activeMinutes !== undefined)
    filters.push(`updated_at >= ${param(now - query.activeMinutes * 60_000)}`);
  const scope = [
    ...(query.keys !== undefined ? [`key = ANY(${param([...new Set(query.keys)])})`] : []),
    ...(query.agentIds !== undefined ? [`agent_id = ANY(${param([...new Set(query.agentIds)])})`] : []),
  ];
  // `alsoKeys` is left after folding only beside `keys` or `agentIds`: `(keys AND agentIds) OR key IN alsoKeys`.
  if (query.alsoKeys !== undefined) {
    filters.push(`(${scope.join(' AND ')} OR key = ANY(${param([...new Set(query.alsoKeys)])}))`);
  } else {
    filters.push(...scope);
  }
  const kinds = [...new Set(query.kinds ?? [])];
  const where = (extra: string[]) => {
    const all = [...extra, ...filters];
    return all.length > 0 ? ` WHERE ${all.join(' AND ')}` : '';
  };
  const order = ' ORDER BY updated_at DESC, key';
  const offset = query.offset !== undefined && query.offset > 0 ? Math.floor(query.offset) : 0;
  // Each walk must reach past the skipped rows; the outer order then skips them.
  const armLimitSql = () => (limit < 0 ? '' : ` LIMIT ${param(limit + offset)}`);
  const limitSql = () =>
    `${limit < 0 ? '' : ` LIMIT ${param(limit)}`}${offset > 0 ? ` OFFSET ${param(offset)}` : ''}`;

  const sides = query.includeArchived ? [LIVE, ARCHIVED] : [LIVE];
  if (mode === 'count') {
    const kindFilter = kinds.length > 0 ? [`kind = ANY(${param(kinds)})`] : [];
    const liveOnly = query.includeArchived ? [] : [LIVE];
    return { text: `SELECT count(*) AS count FROM sessions${where([...liveOnly, ...kindFilter])}`, values };
  }
  const kindFilters = kinds.length === 0 ? [[]] : kinds.map((kind) => [`kind = ${param(kind)}`]);
  const walks = kindFilters.flatMap((kindFilter) => sides.map((side) => [side, ...kindFilter]));
  if (walks.length === 1) {
    return {
      text: `SELECT record, state_version FROM sessions${where(walks[0]!)}${order}${limitSql()}`,
      values,
    };
  }
  const arms = walks.map(
    (conditions) =>
      `(SELECT updated_at, key, record, state_version FROM sessions${where(conditions)}${order}${armLimitSql()})`,
  );
  return {
    text: `SELECT record, state_version FROM (${arms.join(' UNION ALL ')}) AS picked${order}${limitSql()}`,
    values,
  };
}

/**
 * A `limit` with `MemoryStore`'s meaning: absent or infinite is -1 (no limit), negative or NaN is
 * 0, fractions round down.
 */
export function sqlLimit(limit: number | undefined): number {
  if (limit === undefined || limit === Number.POSITIVE_INFINITY) return -1;
  return limit > 0 ? Math.floor(limit) : 0;
}
