import type { SessionRecord } from '../interfaces/records.js';
import type { SessionListQuery } from '../interfaces/store.js';

/**
 * True when `session` passes every filter of `query` except `limit` (which needs the sorted list).
 * Shared by stores that filter in memory.
 *
 * @param now - the clock for `activeMinutes`
 */
export function matchesSessionQuery(session: SessionRecord, query: SessionListQuery, now: number): boolean {
  if (!query.includeArchived && session.archivedAt !== undefined) return false;
  if (query.kinds && query.kinds.length > 0 && !query.kinds.includes(session.kind)) return false;
  if (query.activeMinutes !== undefined && session.updatedAt < now - query.activeMinutes * 60_000)
    return false;
  if (query.spawnedBy !== undefined && !spawnedByOneOf(session, query.spawnedBy)) return false;
  if (!inSessionScope(session, query)) return false;
  if (query.sessionId !== undefined && session.sessionId !== query.sessionId) return false;
  if (query.label !== undefined && session.label !== query.label) return false;
  if (query.onlyForked && session.forked !== true) return false;
  return true;
}

/** True when `session` was spawned by `spawners` (one key, or any of several). */
function spawnedByOneOf(session: SessionRecord, spawners: string | readonly string[]): boolean {
  if (typeof spawners === 'string') return session.spawnedBy === spawners;
  return session.spawnedBy !== undefined && spawners.includes(session.spawnedBy);
}

/**
 * A query's `spawnedBy` as a list, one key or several alike; `undefined` when it does not filter by
 * spawner. For stores that build SQL (`spawned_by IN (...)`) or filter in memory.
 *
 * @param query - a list or count query
 * @returns the spawner keys without duplicates (an empty list matches nothing)
 */
export function spawnerKeys(query: Pick<SessionListQuery, 'spawnedBy'>): readonly string[] | undefined {
  const { spawnedBy } = query;
  if (spawnedBy === undefined) return undefined;
  return typeof spawnedBy === 'string' ? [spawnedBy] : [...new Set(spawnedBy)];
}

/**
 * True when `session` is in the scope of a query: of `agentIds` and among `keys` (each when given),
 * or among `alsoKeys`.
 */
export function inSessionScope(
  session: Pick<SessionRecord, 'key' | 'agentId'>,
  query: Pick<SessionListQuery, 'keys' | 'agentIds' | 'alsoKeys'>,
): boolean {
  const narrowed =
    (query.agentIds === undefined || query.agentIds.includes(session.agentId)) &&
    (query.keys === undefined || query.keys.includes(session.key));
  return narrowed || (query.alsoKeys?.includes(session.key) ?? false);
}

/**
 * A query's scope (`keys`, `agentIds`, `alsoKeys`) with `alsoKeys` folded away wherever that needs
 * no `OR`, for stores that build SQL: without `alsoKeys` (or with an empty one) it is dropped; when
 * neither `keys` nor `agentIds` narrows, it adds nothing and is dropped; when they match nothing (an
 * empty list), the scope is `alsoKeys` alone, as `keys`. What is left, `keys` and/or `agentIds` with
 * a non-empty `alsoKeys`, a store answers with `(keys AND agentIds) OR key IN alsoKeys`.
 *
 * @param query - a list or search query
 * @returns the same query with its scope folded
 */
export function foldAlsoKeys<Q extends Pick<SessionListQuery, 'keys' | 'agentIds' | 'alsoKeys'>>(
  query: Q,
): Q {
  const { alsoKeys, ...rest } = query;
  if (alsoKeys === undefined || alsoKeys.length === 0) return rest as Q;
  if (rest.keys === undefined && rest.agentIds === undefined) return rest as Q;
  if (rest.keys?.length === 0 || rest.agentIds?.length === 0) {
    const { agentIds: _agents, ...others } = rest;
    return { ...others, keys: alsoKeys } as Q;
  }
  return query;
}

/** The order every Store lists sessions in: newest `updatedAt` first, then key ascending. */
export function compareSessionsNewestFirst(a: SessionRecord, b: SessionRecord): number {
  return b.updatedAt - a.updatedAt || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
}
