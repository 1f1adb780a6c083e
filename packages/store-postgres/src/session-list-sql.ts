import type { SessionListQuery } from '@colloquy/core';

/** One statement and its parameters. */
export interface Sql {
  text: string;
  values: unknown[];
}

/**
 * Turns a session list query into SQL (rows: `record` and `state_version`) that walks an index in `updated_at DESC, key` order and
 * stops after `limit` rows, so a list costs O(result): with `kinds`, one walk of the per-kind index
 * per kind, merged (`UNION ALL` of limited arms, then the outer order and limit); otherwise the
 * recency index of live (or all) sessions, the spawner index, or the key, session id and label
 * lookups. The other filters are checked on the rows a walk meets.
 *
 * @param mode - `rows` selects records; `count` counts (ignoring `limit`)
 * @param now - the clock for `activeMinutes`
 * @returns the statement, or `undefined` when nothing can match
 */
export function sessionListSql(
  query: SessionListQuery,
  mode: 'rows' | 'count',
  now: number,
): Sql | undefined {
  if (query.keys?.length === 0 || query.agentIds?.length === 0) return undefined;
  const limit = mode === 'rows' ? sqlLimit(query.limit) : -1;
  if (limit === 0) return undefined;
  const values: unknown[] = [];
  const param = (value: unknown): string => {
    values.push(value);
    return `$${values.length}`;
  };
  const filters: string[] = [];
  if (!query.includeArchived) filters.push('archived_at IS NULL');
  if (query.sessionId !== undefined) filters.push(`session_id = ${param(query.sessionId)}`);
  if (query.label !== undefined) filters.push(`label = ${param(query.label)}`);
  if (query.keys !== undefined) filters.push(`key = ANY(${param([...new Set(query.keys)])})`);
  if (query.spawnedBy !== undefined) filters.push(`spawned_by = ${param(query.spawnedBy)}`);
  if (query.activeMinutes !== undefined)
    filters.push(`updated_at >= ${param(now - query.activeMinutes * 60_000)}`);
  if (query.agentIds !== undefined) filters.push(`agent_id = ANY(${param([...new Set(query.agentIds)])})`);
  const kinds = [...new Set(query.kinds ?? [])];
  const where = (extra: string[]) => {
    const all = [...extra, ...filters];
    return all.length > 0 ? ` WHERE ${all.join(' AND ')}` : '';
  };
  const order = ' ORDER BY updated_at DESC, key';
  const offset = query.offset !== undefined && query.offset > 0 ? Math.floor(query.offset) : 0;
  // Each kind's walk must reach past the skipped rows; the outer order then skips them.
  const armLimitSql = () => (limit < 0 ? '' : ` LIMIT ${param(limit + offset)}`);
  const limitSql = () =>
    `${limit < 0 ? '' : ` LIMIT ${param(limit)}`}${offset > 0 ? ` OFFSET ${param(offset)}` : ''}`;

  if (mode === 'count') {
    const kindFilter = kinds.length > 0 ? [`kind = ANY(${param(kinds)})`] : [];
    return { text: `SELECT count(*) AS count FROM sessions${where(kindFilter)}`, values };
  }
  if (kinds.length <= 1) {
    const kindFilter = kinds.length === 1 ? [`kind = ${param(kinds[0])}`] : [];
    return {
      text: `SELECT record, state_version FROM sessions${where(kindFilter)}${order}${limitSql()}`,
      values,
    };
  }
  const arms = kinds.map(
    (kind) =>
      `(SELECT updated_at, key, record, state_version FROM sessions${where([`kind = ${param(kind)}`])}${order}${armLimitSql()})`,
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
