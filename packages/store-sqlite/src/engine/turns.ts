import type { SessionRecord } from '@colloquy/core';
import type { RunRecord } from '@colloquy/core/gateway';
import {
  addUsage,
  type DeliveryRecord,
  type InboundCommit,
  type InboundCommitResult,
  type PlannedDelivery,
  type SessionPatch,
  serializeRecord,
  type TurnEnd,
  type TurnEndResult,
} from '@colloquy/core/store';
import type { DynamicStatements } from './dynamic-statements.js';
import { createRun, type DeliveryColumns, updateRun } from './runs.js';
import { insertSession, mergeSessionPatch, writeSessionPatch } from './sessions.js';
import type { Statements } from './statements.js';
import { appendMessage } from './transcripts.js';

// The turn operations, done natively: each is one pass of prepared statements inside the engine's
// transaction (its own, or the caller's), reading only what decides the outcome (a run's existence,
// the session, whether its inbox or a watch waits) and nothing the caller already holds.

/** The session stored under `key`, parsed, with its state version (0 while it never changed). */
function readSession(
  s: Statements,
  key: string,
): { record: SessionRecord; stateVersion: number } | undefined {
  const row = s.sessionByKey.get(key);
  return row === undefined
    ? undefined
    : { record: JSON.parse(row[0]) as SessionRecord, stateVersion: row[1] };
}

/** The record as returned to the caller: with its `stateVersion` when it has one. */
function withStateVersion(record: SessionRecord, stateVersion: number): SessionRecord {
  if (stateVersion > 0) record.stateVersion = stateVersion;
  return record;
}

/** True when a session waits in `sessions_yield` (`meta.yield` holds its state). */
function isYielded(session: SessionRecord): boolean {
  const state = session.meta?.yield;
  return typeof state === 'object' && state !== null;
}

/** `TurnOperations.commitInbound`: see `InboundCommit`. */
export function commitInbound(s: Statements, inbound: InboundCommit): InboundCommitResult {
  const { create, update } = inbound.session;
  const key = create.key;
  if (s.runExists.get(inbound.run.runId) !== undefined) return { status: 'duplicate' };
  const current = readSession(s, key);
  const { begin } = inbound;
  const begins =
    begin !== undefined &&
    !(current !== undefined && isYielded(current.record)) &&
    s.inboxWaiting.get(key) === undefined;
  let session: SessionRecord;
  if (current !== undefined) {
    const set: SessionPatch = begins ? { ...update, ...begin.session } : update;
    const written = writeSessionPatch(s, key, current.record, current.stateVersion, set);
    session = withStateVersion(written.record, written.stateVersion);
  } else {
    session = begins ? mergeSessionPatch(create, begin.session) : create;
    insertSession(s, session);
  }
  if (begins) {
    const input = appendMessage(s, key, begin.input);
    createRun(s, begin.run);
    return { status: 'begun', session, run: begin.run, input };
  }
  createRun(s, inbound.run);
  return { status: 'queued', session, run: inbound.run };
}

/** `TurnOperations.endTurn`: see `TurnEnd`. */
export function endTurn(s: Statements, dynamic: DynamicStatements, end: TurnEnd): TurnEndResult {
  const key = end.sessionKey;
  const current = readSession(s, key);
  const finalMessage =
    current !== undefined && end.finalMessage !== undefined
      ? appendMessage(s, key, end.finalMessage)
      : undefined;
  const runs: RunRecord[] = [];
  let marked: PlannedDelivery | undefined;
  for (const { runId, patch } of end.runs) {
    const delivery = end.delivery?.runId === runId ? end.delivery : undefined;
    if (delivery === undefined) {
      runs.push(updateRun(s, dynamic, runId, patch));
      continue;
    }
    const plan: PlannedDelivery =
      finalMessage === undefined ? delivery.plan : { ...delivery.plan, finalSeq: finalMessage.seq };
    // The delivery fields have columns of their own, so the stored meta is not read: only whether
    // the run has a delivery state (a run already settled keeps it; a session gone gets nothing).
    const settled =
      patch.meta !== undefined ? patch.meta.delivery !== undefined : s.runHasDelivery.get(runId) === 1;
    const mark = current !== undefined && !settled;
    if (mark) marked = plan;
    const fields: DeliveryColumns = {
      pendingDelivery: plan,
      ...(mark ? { delivery: { kind: plan.kind, status: 'sending', at: delivery.at } } : {}),
    };
    // A meta in the patch replaces the stored one (with the delivery fields joined to it); without
    // one, only the delivery columns change.
    runs.push(
      patch.meta !== undefined
        ? updateRun(s, dynamic, runId, { ...patch, meta: { ...patch.meta, ...fields } })
        : updateRun(s, dynamic, runId, patch, fields),
    );
  }
  let session: SessionRecord | undefined;
  if (current !== undefined) {
    const { usage, costUsd } = end.add ?? {};
    const written = writeSessionPatch(s, key, current.record, current.stateVersion, {
      ...end.session,
      ...(usage ? { usage: addUsage(current.record.usage, usage) } : {}),
      ...(costUsd !== undefined
        ? { estimatedCostUsd: (current.record.estimatedCostUsd ?? 0) + costUsd }
        : {}),
    });
    session = withStateVersion(written.record, written.stateVersion);
  }
  const result: TurnEndResult = {
    session,
    runs,
    inboxWaiting: current !== undefined && s.inboxWaiting.get(key) !== undefined,
    watched: s.targetWatchDue.get(key) !== undefined,
  };
  if (finalMessage !== undefined) result.finalMessage = finalMessage;
  if (marked !== undefined) result.marked = marked;
  return result;
}

/** `TurnOperations.recordDeliveries`: each outcome by column, in order. */
export function recordDeliveries(s: Statements, records: readonly DeliveryRecord[]): void {
  for (const record of records) {
    s.setRunDelivery.run(serializeRecord(record.state, 'delivery state'), record.runId);
    if (record.platformMessage !== undefined) {
      s.setPlatformId.run(record.platformMessage.id, record.sessionKey, record.platformMessage.seq);
    }
    if (record.transcript !== undefined && s.sessionExists.get(record.sessionKey) !== undefined) {
      appendMessage(s, record.sessionKey, record.transcript);
    }
  }
}
