import type { Gateway, RunSummary, SessionsListParams } from '../interfaces/gateway.js';
import type { SessionRecord } from '../interfaces/records.js';
import { normalizeSessionKey } from '../keys/index.js';

/** One level of a spawn tree, as {@link listSpawnLevel} reads it. */
export interface SpawnLevel {
  /** Entry `i`: the direct children of `parentKeys[i]`, in the list's order (newest `updatedAt` first). */
  children: SessionRecord[][];
  /** The latest run of each child that has one, by key (only with `withLatestRun`). */
  latestRuns?: Record<string, RunSummary>;
}

/**
 * The direct children of each of `parentKeys`, read with ONE `sessions.list` call (its `spawnedBy`
 * takes a list), so a walk of a spawn tree costs a call per level, not per parent. It reads through
 * the gateway, as every session tool does: visibility stays the caller's check, on what it returns.
 *
 * @param gateway - the gateway to read through
 * @param parentKeys - the level's keys
 * @param params - archived children too, the children's latest runs too
 * @returns the children grouped by parent
 */
export async function listSpawnLevel(
  gateway: Gateway,
  parentKeys: readonly string[],
  params: Pick<SessionsListParams, 'includeArchived' | 'withLatestRun'> = {},
): Promise<SpawnLevel> {
  const children = parentKeys.map((): SessionRecord[] => []);
  if (parentKeys.length === 0) return { children };
  // One parent goes as a plain key, which every gateway version accepts.
  const result = await gateway.call('sessions.list', {
    ...params,
    spawnedBy: parentKeys.length === 1 ? parentKeys[0]! : [...parentKeys],
  });
  const position = new Map(parentKeys.map((key, i) => [normalizeSessionKey(key), i]));
  for (const session of result.sessions) {
    const i = session.spawnedBy === undefined ? undefined : position.get(session.spawnedBy);
    if (i !== undefined) children[i]!.push(session);
  }
  return result.latestRuns ? { children, latestRuns: result.latestRuns } : { children };
}
