import type { SessionRecord } from '../interfaces/records.js';

/** Where a session sits in its spawn tree, as {@link checkSessionAccess} needs it. */
export interface SessionLineage {
  /** The `spawnedBy` chain, nearest parent first (empty for a top-level session). */
  ancestors: string[];
  /**
   * How many of `ancestors`, nearest first, the session holds forked history of (see
   * `SessionAccessInput.targetInheritsFrom`).
   */
  inheritsFrom: number;
}

/** The fields of a session record a lineage walk reads. */
export type LineageRecord = Pick<SessionRecord, 'spawnedBy' | 'forked'>;

/** The longest spawn chain a lineage walk follows. */
export const MAX_LINEAGE_DEPTH = 32;

/**
 * Walks a session's `spawnedBy` chain up to {@link MAX_LINEAGE_DEPTH} links (stopping at a cycle or
 * a missing parent) and counts the leading links that were forks, so the guard can check both who
 * spawned the session and whose history it holds.
 *
 * @param session - the session to start from
 * @param getSession - reads a session by its internal key (`undefined` when it does not exist)
 * @returns the ancestors, nearest first, and how many of them the session inherited history from
 * @example
 * ```ts
 * const { ancestors, inheritsFrom } = await readSessionLineage(target, (key) => store.getSession(key));
 * checkSessionAccess({ ...question, targetAncestors: ancestors, targetInheritsFrom: inheritsFrom });
 * ```
 */
export async function readSessionLineage(
  session: LineageRecord,
  getSession: (key: string) => Promise<LineageRecord | undefined>,
): Promise<SessionLineage> {
  const ancestors: string[] = [];
  let inheritsFrom = 0;
  let forkedLink = session.forked === true;
  let parent = session.spawnedBy;
  while (parent !== undefined && ancestors.length < MAX_LINEAGE_DEPTH && !ancestors.includes(parent)) {
    ancestors.push(parent);
    if (forkedLink) inheritsFrom++;
    const record = await getSession(parent);
    if (!record) break;
    forkedLink &&= record.forked === true;
    parent = record.spawnedBy;
  }
  return { ancestors, inheritsFrom };
}
