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
  if (query.spawnedBy !== undefined && session.spawnedBy !== query.spawnedBy) return false;
  if (query.agentIds && !query.agentIds.includes(session.agentId)) return false;
  if (query.keys && !query.keys.includes(session.key)) return false;
  if (query.sessionId !== undefined && session.sessionId !== query.sessionId) return false;
  if (query.label !== undefined && session.label !== query.label) return false;
  return true;
}

/** The order every Store lists sessions in: newest `updatedAt` first, then key ascending. */
export function compareSessionsNewestFirst(a: SessionRecord, b: SessionRecord): number {
  return b.updatedAt - a.updatedAt || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
}
