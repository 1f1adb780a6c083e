import type { BatchReads } from '../interfaces/batch-reads.js';
import type { StoreOperations } from '../interfaces/store.js';

/**
 * The batched reads of a store: its own where it implements them (`listRunsOfSessions`, `readTails`
 * on {@link StoreOperations}), else core's defaults, one `listRuns` or `readTail` per session, all in
 * flight together. Works on a transaction handle too.
 *
 * @param store - a store or an open transaction
 * @returns the two reads, bound to `store`
 * @example
 * ```ts
 * const [mainRuns, childRuns] = await batchReads(store).listRunsOfSessions([mainKey, childKey], 5);
 * ```
 */
export function batchReads(store: StoreOperations): BatchReads {
  return {
    listRunsOfSessions: store.listRunsOfSessions
      ? store.listRunsOfSessions.bind(store)
      : (sessionKeys, limit) =>
          Promise.all(sessionKeys.map((sessionKey) => store.listRuns({ sessionKey, limit }))),
    readTails: store.readTails
      ? store.readTails.bind(store)
      : (sessionKeys, limit) =>
          Promise.all(sessionKeys.map((sessionKey) => store.readTail(sessionKey, limit))),
  };
}
