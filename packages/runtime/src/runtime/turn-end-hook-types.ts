import type { SessionRecord } from '@colloquy/core';
import type { RunRecord } from '@colloquy/core/gateway';
import type { StoreTransaction } from '@colloquy/core/store';

/**
 * Called inside the transaction that ends a turn (e.g. to write an announce outbox row atomically);
 * it writes through `tx`, the open transaction. It may return a function to run once that
 * transaction has committed (e.g. to start delivering what it wrote).
 */
export type TurnEndHook = (
  runs: readonly RunRecord[],
  session: SessionRecord | undefined,
  tx: StoreTransaction,
  // biome-ignore lint/suspicious/noConfusingVoidType: `void` lets plain `async (...) => {}` hooks type-check.
) => void | AfterCommit | Promise<void | AfterCommit>;

/** Work to do once the transaction a hook ran in has committed. */
export type AfterCommit = () => void;
