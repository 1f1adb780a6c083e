import type { RunRecord, StoredMessage } from './records.js';

/**
 * Reads of many sessions at once, for views that show a whole spawn tree (`sessions.tree`, the
 * `subagents` tool): one call where a loop would make one per session. A store implements them as
 * optional {@link StoreOperations} methods to answer in one query; `batchReads(store)` gives every
 * store both, its own or core's defaults built on one row-level call per session.
 */
export interface BatchReads {
  /**
   * The newest `limit` runs of each session: entry `i` holds those of `sessionKeys[i]` (empty when
   * it has none), newest `createdAt` first, exactly as `listRuns({ sessionKey, limit })` returns them.
   *
   * @param sessionKeys - internal session keys (a key given twice is answered twice)
   * @param limit - runs per session, at least 1
   */
  listRunsOfSessions(sessionKeys: readonly string[], limit: number): Promise<RunRecord[][]>;
  /**
   * The last `limit` messages of each session: entry `i` holds those of `sessionKeys[i]` (empty for a
   * session without messages, or none), in ascending `seq`, exactly as `readTail(sessionKey, limit)`
   * returns them. O(limit) per session, whatever the transcripts' lengths.
   *
   * @param sessionKeys - internal session keys (a key given twice is answered twice)
   * @param limit - messages per session, at least 1
   */
  readTails(sessionKeys: readonly string[], limit: number): Promise<StoredMessage[][]>;
}
