import type { Lane, RunRecord } from '@colloquy/core/gateway';
import type { BegunTurn } from '../agent/run-lifecycle.js';
import type { QueueItem } from './command-queue.js';

/** A run as the command queue holds it (the durable record lives in the store). */
export interface QueuedRun extends QueueItem {
  deliver: boolean;
  extraSystemPrompt?: string;
  /** Human and wake messages fold into the next turn; inter-session messages each get their own. */
  foldable: boolean;
  /** The turn this run began when it was stored (see `queueInboundRun`): the executor does not begin it again. */
  begun?: BegunTurn;
}

/**
 * The queue entry of a stored run.
 *
 * @param run - the run record
 * @returns the queue item
 */
export function toQueuedRun(run: RunRecord): QueuedRun {
  return {
    id: run.runId,
    sessionKey: run.sessionKey,
    lane: run.lane as Lane,
    deliver: run.deliver,
    foldable: run.provenance === undefined,
    ...(run.timeoutMs ? { timeoutMs: run.timeoutMs } : {}),
    ...(run.extraSystemPrompt ? { extraSystemPrompt: run.extraSystemPrompt } : {}),
  };
}

/**
 * The fold rule: `next` joins `head`'s turn when both are foldable and agree on lane, delivery and
 * extra system prompt, and neither began its turn already (when it was stored): a begun run is no
 * longer `queued`, so a turn it joined would skip it.
 *
 * @param head - the first item of the turn
 * @param next - the item queued behind it
 * @returns whether they share one turn
 */
export function canFoldRuns(head: QueuedRun, next: QueuedRun): boolean {
  return (
    head.begun === undefined &&
    next.begun === undefined &&
    head.foldable &&
    next.foldable &&
    head.lane === next.lane &&
    head.deliver === next.deliver &&
    head.extraSystemPrompt === next.extraSystemPrompt
  );
}
