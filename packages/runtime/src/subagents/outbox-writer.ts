import type { SessionRecord } from '@colloquy/core';
import type { RunRecord } from '@colloquy/core/gateway';
import { ANNOUNCE_SKIP, classifySessionKey } from '@colloquy/core/internal';
import { type OutboxEntry, type StoreTransaction, TERMINAL_RUN_STATUSES } from '@colloquy/core/store';
import { buildAnnounce } from './announce.js';

/** A row the writer created: who must be drained, and whether it needs no delivery. */
export interface WrittenRow {
  childSessionKey: string;
  runId: string;
  requesterSessionKey: string;
  skipped: boolean;
}

/**
 * True when a run's end is announced to the session that spawned its session: the run ended, it
 * belongs to a sub-agent session, it was the spawned task or was not delivered to a chat itself (a
 * thread-bound child's conversation in its thread is not announced), it led its turn (folded
 * companions share the leader's result), and it was not a `sessions_send` exchange (whose reply
 * goes back to the sender directly).
 *
 * @param run - the run
 * @param session - its session, when it still exists
 * @param mainKey - `session.mainKey`
 * @returns the requester's key, or undefined when there is nothing to announce
 */
export function announceRequesterOf(
  run: RunRecord,
  session: SessionRecord | undefined,
  mainKey: string,
): string | undefined {
  if (!TERMINAL_RUN_STATUSES.includes(run.status)) return undefined;
  // A thread-bound child's spawned run answers in its thread and is announced too; later
  // conversation in the thread is not.
  if (run.deliver && run.provenance?.sourceTool !== 'sessions_spawn') return undefined;
  if (run.meta?.foldedInto !== undefined) return undefined;
  if (run.provenance?.sourceTool === 'sessions_send') return undefined;
  const kind = session?.kind ?? classifySessionKey(run.sessionKey, { mainKey });
  if (kind !== 'subagent') return undefined;
  return session?.spawnedBy ?? run.spawnedBy;
}

/**
 * Writes the announce of each ended sub-agent run to the durable outbox, keyed by
 * `(childSessionKey, runId)`. Called INSIDE the transaction that ends the run, so the completion
 * and the run's final state commit together or not at all. A child that answered exactly
 * `ANNOUNCE_SKIP` gets a `skipped` row (recorded, never delivered) and the run's announce outcome.
 *
 * @param store - the store (inside a transaction)
 * @param runs - the runs that just ended (leader first)
 * @param session - their session after the end
 * @param now - epoch ms
 * @param mainKey - `session.mainKey`
 * @param locate - the transcript locator of a session (`Store.transcriptLocator`)
 * @returns the rows written (already existing rows are left alone and not returned)
 */
export async function writeOutbox(
  store: StoreTransaction,
  runs: readonly RunRecord[],
  session: SessionRecord | undefined,
  now: number,
  mainKey: string,
  locate: (session: SessionRecord) => string | undefined,
): Promise<WrittenRow[]> {
  const written: WrittenRow[] = [];
  for (const run of runs) {
    const requesterSessionKey = announceRequesterOf(run, session, mainKey);
    if (requesterSessionKey === undefined) continue;
    const payload = await buildAnnounce(store, run, session, session ? locate(session) : undefined);
    const entry: OutboxEntry = {
      childSessionKey: run.sessionKey,
      runId: run.runId,
      requesterSessionKey,
      status: payload.silent ? 'skipped' : 'pending',
      payload: payload as unknown as Record<string, unknown>,
      attempts: 0,
      nextAttemptAt: now,
      createdAt: now,
      updatedAt: now,
    };
    if (!(await store.putOutbox(entry))) continue;
    if (payload.silent) {
      await store.updateRun(run.runId, { announce: { outcome: 'skipped', reason: ANNOUNCE_SKIP, at: now } });
    }
    written.push({
      childSessionKey: run.sessionKey,
      runId: run.runId,
      requesterSessionKey,
      skipped: payload.silent,
    });
  }
  return written;
}
