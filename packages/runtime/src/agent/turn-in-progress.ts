import type { RuntimeContext } from '../runtime/runtime-context.js';

/**
 * True while a turn of the session runs here and has not stored its end yet. Once it has (see
 * `RuntimeContext.turnEndStored`), it only sends its reply: the session is idle in the store, a new
 * message may begin its turn in the commit that stores it, and a `running` session row belongs to
 * that turn, not to this one.
 *
 * @param ctx - the runtime internals
 * @param sessionKey - the session
 */
export function turnInProgress(ctx: RuntimeContext, sessionKey: string): boolean {
  return ctx.queue.runningBatch(sessionKey) !== undefined && !ctx.turnEndStored.has(sessionKey);
}
