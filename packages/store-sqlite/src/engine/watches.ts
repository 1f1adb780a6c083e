import {
  changeWindowStart,
  type SessionChanges,
  type SessionWatch,
  summarizeChanges,
  type WatchListQuery,
} from '@colloquy/core/store';
import { sqlLimit } from '../session-list-plan.js';
import { type DynamicStatements, whereClause } from './dynamic-statements.js';
import type { Statements } from './statements.js';

// Session changes and the watches on them.

/** What changed in a session since `sinceVersion`, or undefined when there is no such session. */
export function readChanges(
  s: Statements,
  sessionKey: string,
  sinceVersion: number,
): SessionChanges | undefined {
  const toVersion = s.stateVersionOf.get(sessionKey);
  if (toVersion === undefined) return undefined;
  const from = changeWindowStart(sinceVersion, toVersion);
  return summarizeChanges(sinceVersion, toVersion, s.changeCountsAfter.all(sessionKey, from));
}

/** Stores a watch, replacing the watcher's earlier watch on the same target. */
export function putWatch(s: Statements, watch: SessionWatch): void {
  s.upsertWatch.run(watch.watcherKey, watch.targetKey, watch.afterVersion, watch.id, watch.createdAt);
}

/** The watches matching `query`, oldest first. */
export function listWatches(
  s: Statements,
  dynamic: DynamicStatements,
  query: WatchListQuery,
): SessionWatch[] {
  const limit = sqlLimit(query.limit);
  if (limit === 0) return [];
  // The check after every turn: one index probe answers "no watch on this session" without the
  // join and the sort.
  if (query.targetKey !== undefined && s.targetWatched.get(query.targetKey) === undefined) return [];
  const filters: string[] = [];
  const params: unknown[] = [];
  if (query.watcherKey !== undefined) {
    filters.push('w.watcher_key = ?');
    params.push(query.watcherKey);
  }
  if (query.targetKey !== undefined) {
    filters.push('w.target_key = ?');
    params.push(query.targetKey);
  }
  if (query.due) filters.push('s.state_version > w.after_version');
  const join = query.due ? ' JOIN sessions s ON s.key = w.target_key' : '';
  const sql =
    'SELECT w.watcher_key AS watcherKey, w.target_key AS targetKey, w.after_version AS afterVersion, ' +
    `w.id AS id, w.created_at AS createdAt FROM session_watches w${join}${whereClause(filters)} ` +
    'ORDER BY w.created_at, w.rowid LIMIT ?';
  return dynamic.get(sql).all(...params, limit) as SessionWatch[];
}

/** Deletes a watch (only the one with `id`, when given); false when there was none. */
export function deleteWatch(s: Statements, watcherKey: string, targetKey: string, id?: string): boolean {
  return (
    (id === undefined
      ? s.deleteWatch.run(watcherKey, targetKey)
      : s.deleteWatchWithId.run(watcherKey, targetKey, id)
    ).changes > 0
  );
}
