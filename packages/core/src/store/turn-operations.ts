import type { RunRecord, SessionRecord } from '../interfaces/records.js';
import type { SessionPatch, StoreTransaction } from '../interfaces/store.js';
import type {
  DeliveryRecord,
  InboundCommit,
  InboundCommitResult,
  PlannedDelivery,
  RunPatch,
  TurnEnd,
  TurnEndResult,
  TurnOperations,
} from '../interfaces/turn-operations.js';
import { addUsage } from './token-usage.js';

/**
 * The turn operations of a store: its own where it implements them (`commitInbound`, `endTurn`,
 * `recordDeliveries` on {@link StoreOperations}), else core's defaults ({@link rowTurnOperations}).
 * Works on a transaction handle too: the operations then join it.
 *
 * @param store - a store or an open transaction
 * @returns the three operations, bound to `store`
 * @example
 * ```ts
 * const turns = turnOperations(store);
 * const committed = await turns.commitInbound({ session: { create, update }, run });
 * ```
 */
export function turnOperations(store: StoreTransaction): TurnOperations {
  const byRows = rowTurnOperations(store);
  return {
    commitInbound: store.commitInbound ? store.commitInbound.bind(store) : byRows.commitInbound,
    endTurn: store.endTurn ? store.endTurn.bind(store) : byRows.endTurn,
    recordDeliveries: store.recordDeliveries ? store.recordDeliveries.bind(store) : byRows.recordDeliveries,
  };
}

/**
 * Core's turn operations, each one transaction of the store's row-level calls (`getSession`,
 * `createRun`, `appendMessages`, ...), whatever the store implements natively. A store with its own
 * operations can fall back to these for input its fast path cannot take (PostgreSQL's does for a
 * session record holding a NUL character). On a transaction handle they join its transaction.
 *
 * @param store - a store or an open transaction
 * @returns the three operations, bound to `store`
 */
export function rowTurnOperations(store: StoreTransaction): TurnOperations {
  return {
    commitInbound: (inbound) => store.transaction((tx) => commitInboundByRows(tx, inbound)),
    endTurn: (end) => store.transaction((tx) => endTurnByRows(tx, end)),
    recordDeliveries: (records) =>
      records.length === 0
        ? Promise.resolve()
        : store.transaction((tx) => recordDeliveriesByRows(tx, records)),
  };
}

/** `record` with `patch` merged in as `patchSession` merges it: `null` clears a field. */
function withPatch(record: SessionRecord, patch: SessionPatch): SessionRecord {
  const merged: Record<string, unknown> = { ...record };
  for (const [field, value] of Object.entries(patch)) {
    if (value === null) delete merged[field];
    else if (value !== undefined) merged[field] = value;
  }
  return merged as unknown as SessionRecord;
}

/** True when a session waits in `sessions_yield` (`meta.yield` holds its state). */
function isYielded(session: SessionRecord): boolean {
  const state = session.meta?.yield;
  return typeof state === 'object' && state !== null;
}

async function commitInboundByRows(
  tx: StoreTransaction,
  inbound: InboundCommit,
): Promise<InboundCommitResult> {
  const { create, update } = inbound.session;
  const key = create.key;
  if (await tx.getRun(inbound.run.runId)) return { status: 'duplicate' };
  const current = await tx.getSession(key);
  // The inbound fields and, when the turn begins, its fields: one session write either way.
  const { begin } = inbound;
  const begins =
    begin !== undefined && !(current && isYielded(current)) && (await tx.listInbox(key)).length === 0;
  const set: SessionPatch = begins ? { ...update, ...begin.session } : update;
  let session: SessionRecord;
  if (current) session = await tx.patchSession(key, set);
  else {
    session = begins ? withPatch(create, begin.session) : create;
    await tx.putSession(session);
  }
  if (begins) {
    const [input] = await tx.appendMessages(key, [begin.input]);
    await tx.createRun(begin.run);
    return { status: 'begun', session, run: begin.run, input: input! };
  }
  await tx.createRun(inbound.run);
  return { status: 'queued', session, run: inbound.run };
}

async function endTurnByRows(tx: StoreTransaction, end: TurnEnd): Promise<TurnEndResult> {
  const current = await tx.getSession(end.sessionKey);
  const finalMessage =
    current && end.finalMessage
      ? (await tx.appendMessages(end.sessionKey, [end.finalMessage]))[0]
      : undefined;
  const runs: RunRecord[] = [];
  let marked: PlannedDelivery | undefined;
  for (const { runId, patch } of end.runs) {
    let merged: RunPatch = patch;
    const delivery = end.delivery?.runId === runId ? end.delivery : undefined;
    if (delivery) {
      const plan: PlannedDelivery = {
        ...delivery.plan,
        ...(finalMessage ? { finalSeq: finalMessage.seq } : {}),
      };
      const meta = patch.meta ?? (await tx.getRun(runId))?.meta ?? {};
      // A session gone meanwhile gets no message, and a run already settled keeps its delivery.
      const mark = current !== undefined && meta.delivery === undefined;
      if (mark) marked = plan;
      merged = {
        ...patch,
        meta: {
          ...meta,
          pendingDelivery: plan,
          ...(mark ? { delivery: { kind: plan.kind, status: 'sending', at: delivery.at } } : {}),
        },
      };
    }
    runs.push(await tx.updateRun(runId, merged));
  }
  let session: SessionRecord | undefined;
  if (current) {
    const { usage, costUsd } = end.add ?? {};
    session = await tx.patchSession(end.sessionKey, {
      ...end.session,
      ...(usage ? { usage: addUsage(current.usage, usage) } : {}),
      ...(costUsd !== undefined ? { estimatedCostUsd: (current.estimatedCostUsd ?? 0) + costUsd } : {}),
    });
  }
  const inboxWaiting = current !== undefined && (await tx.listInbox(end.sessionKey)).length > 0;
  const watched = (await tx.listWatches({ targetKey: end.sessionKey, due: true, limit: 1 })).length > 0;
  return {
    session,
    runs,
    ...(finalMessage ? { finalMessage } : {}),
    ...(marked ? { marked } : {}),
    inboxWaiting,
    watched,
  };
}

async function recordDeliveriesByRows(
  tx: StoreTransaction,
  records: readonly DeliveryRecord[],
): Promise<void> {
  for (const record of records) {
    const run = await tx.getRun(record.runId);
    if (run) await tx.updateRun(record.runId, { meta: { ...run.meta, delivery: record.state } });
    if (record.platformMessage) {
      await tx.setMessagePlatformId(record.sessionKey, record.platformMessage.seq, record.platformMessage.id);
    }
    if (record.transcript && (await tx.getSession(record.sessionKey))) {
      await tx.appendMessages(record.sessionKey, [record.transcript]);
    }
  }
}
