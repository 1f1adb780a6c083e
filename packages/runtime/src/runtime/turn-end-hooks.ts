import type { SessionRecord } from '@colloquy/core';
import type { RunRecord } from '@colloquy/core/gateway';
import type { StoreTransaction } from '@colloquy/core/store';
import type { RuntimeContext } from './runtime-context.js';
import type { AfterCommit } from './turn-end-hook-types.js';

/**
 * Runs the turn-end hooks inside the open transaction that ends runs, and returns what they asked
 * to run once it commits (call it after the transaction resolved, never inside it).
 *
 * @param ctx - the runtime internals
 * @param runs - the runs that ended
 * @param session - their session after the end
 * @param tx - the open transaction
 * @returns the hooks' after-commit work, as one function
 */
export async function runTurnEndHooks(
  ctx: RuntimeContext,
  runs: readonly RunRecord[],
  session: SessionRecord | undefined,
  tx: StoreTransaction,
): Promise<AfterCommit> {
  const after: AfterCommit[] = [];
  for (const hook of ctx.turnEndHooks) {
    const then = await hook(runs, session, tx);
    if (typeof then === 'function') after.push(then);
  }
  return () => {
    for (const work of after) work();
  };
}
