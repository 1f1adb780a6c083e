import {
  ColloquyError,
  type SessionRecord,
  type StoredMessage,
  type TranscriptMessage,
} from '@colloquy/core';
import {
  type DeliveryRecord,
  type InboundCommit,
  type InboundCommitResult,
  type PlannedDelivery,
  type SessionPatch,
  serializeRecord,
  storedRun,
  type TurnEnd,
  type TurnEndResult,
} from '@colloquy/core/store';
import { pgCode } from './pg-errors.js';
import type { Queryable } from './pg-operations.js';
import { type RunRow, runArrays, runFromRow, runPatchArrays } from './run-columns.js';
import { searchVector } from './search-vector.js';

// The turn operations on PostgreSQL: each is ONE statement, a call of its function (schema 9, see
// run-columns-sql.ts, behind schema 10's NUL check, see nul-sessions-sql.ts), so it costs one round
// trip and commits on its own, or joins the open transaction of the connection it runs on.
// `commitInbound` and `endTurn` answer undefined, having written nothing, when the session record
// holds a NUL character: the caller then does the operation by rows.

/** A session patch as the functions take it: the fields it writes, and those a `null` clears. */
interface SplitPatch {
  set: string;
  cleared: string[];
}

/** Splits `patch` as `patchSession` applies it: `key` and `stateVersion` are never written. */
function splitPatch(patch: SessionPatch): SplitPatch {
  const set: Record<string, unknown> = {};
  const cleared: string[] = [];
  for (const [field, value] of Object.entries(patch)) {
    if (field === 'key' || field === 'stateVersion' || value === undefined) continue;
    if (value === null) cleared.push(field);
    else set[field] = value;
  }
  return { set: serializeRecord(set, 'session patch'), cleared };
}

/** A session as a function returns it: its record and its version column. */
function sessionOf(record: SessionRecord, version: string | number): SessionRecord {
  const stateVersion = Number(version);
  return stateVersion > 0 ? { ...record, stateVersion } : record;
}

/** A message as stored: what was serialised, read back, with its seq. */
function storedMessage(json: string, seq: string | number): StoredMessage {
  return { ...(JSON.parse(json) as TranscriptMessage), seq: Number(seq) };
}

/**
 * `commitInbound` in one statement: see `TurnOperations.commitInbound` of `@colloquy/core`.
 *
 * @returns what it did, or undefined (nothing written) when the session record holds a NUL
 * @throws `CONFLICT` when the run id was stored meanwhile by a concurrent commit, or the session id
 *   of a new session belongs to another session
 */
export async function commitInbound(
  q: Queryable,
  inbound: InboundCommit,
): Promise<InboundCommitResult | undefined> {
  const { create, update } = inbound.session;
  const { begin } = inbound;
  const updated = splitPatch(update);
  const begun = begin ? splitPatch(begin.session) : undefined;
  const input = begin ? serializeRecord(begin.input, 'transcript message') : null;
  // The queued run, then the begun one: the function stores one of them.
  const runs = begin ? [inbound.run, begin.run] : [inbound.run];
  type Row = {
    outcome: 'duplicate' | 'queued' | 'begun' | 'by_rows';
    session: SessionRecord | null;
    version: string | null;
    input_seq: string | null;
  };
  let row: Row | undefined;
  try {
    const result = await q.query<Row>(
      `SELECT outcome, session, version, input_seq FROM colloquy_commit_inbound_or_rows($1, $2, $3, $4, $5, $6, $7, $8,
         $9, $10, $11, $12, $13, $14, $15, $16, $17, $18::json[], $19::json[], $20::json[])`,
      [
        create.key,
        serializeRecord(create, 'session'),
        updated.set,
        updated.cleared,
        begun?.set ?? null,
        begun?.cleared ?? null,
        input,
        begin ? searchVector(begin.input) : null,
        ...runArrays(runs.map(storedRun)),
      ],
    );
    row = result.rows[0];
  } catch (error) {
    throw conflictOf(error, create, inbound.run.runId) ?? error;
  }
  if (row?.outcome === 'by_rows') return undefined;
  if (!row || row.outcome === 'duplicate' || !row.session) return { status: 'duplicate' };
  const session = sessionOf(row.session, row.version ?? 0);
  // The run is the caller's, as stored (core's default returns it the same way).
  if (row.outcome === 'begun' && begin && input !== null && row.input_seq !== null) {
    return { status: 'begun', session, run: begin.run, input: storedMessage(input, row.input_seq) };
  }
  return { status: 'queued', session, run: inbound.run };
}

/** A unique violation of a commit as the row-level calls report it: `CONFLICT`, naming what to change. */
function conflictOf(error: unknown, session: SessionRecord, runId: string): ColloquyError | undefined {
  if (pgCode(error) !== '23505') return undefined;
  const constraint = (error as { constraint?: string }).constraint;
  if (constraint === 'runs_pkey') {
    return new ColloquyError('CONFLICT', `Run "${runId}" already exists; run ids must be unique.`, { runId });
  }
  return new ColloquyError(
    'CONFLICT',
    `Session id "${session.sessionId}" already belongs to another session; give "${session.key}" a fresh sessionId.`,
    { key: session.key, sessionId: session.sessionId },
    { cause: error },
  );
}

/**
 * `endTurn` in one statement: see `TurnOperations.endTurn` of `@colloquy/core`.
 *
 * @returns what it wrote, or undefined (nothing written) when the session record holds a NUL
 * @throws `RUN_NOT_FOUND` when a run of the turn does not exist (nothing is written)
 */
export async function endTurn(q: Queryable, end: TurnEnd): Promise<TurnEndResult | undefined> {
  const patch = splitPatch(end.session);
  const final = end.finalMessage ? serializeRecord(end.finalMessage, 'transcript message') : null;
  const usage = end.add?.usage;
  const { delivery } = end;
  type Row = {
    by_rows: boolean;
    session: SessionRecord | null;
    version: string | null;
    ended_runs: RunRow[];
    final_seq: string | null;
    marked: PlannedDelivery | null;
    inbox_waiting: boolean;
    watched: boolean;
  };
  let row: Row | undefined;
  try {
    const result = await q.query<Row>(
      `SELECT by_rows, session, version, ended_runs, final_seq, marked, inbox_waiting, watched
       FROM colloquy_end_turn_or_rows($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14::json[],
         $15::json[], $16::json[], $17, $18, $19, $20, $21, $22, $23)`,
      [
        end.sessionKey,
        final,
        end.finalMessage ? searchVector(end.finalMessage) : null,
        ...runPatchArrays(end.runs),
        patch.set,
        patch.cleared,
        usage
          ? serializeRecord(
              { ...usage, totalTokens: usage.totalTokens || usage.inputTokens + usage.outputTokens },
              'token usage',
            )
          : null,
        end.add?.costUsd ?? null,
        delivery?.runId ?? null,
        delivery ? serializeRecord(delivery.plan, 'planned delivery') : null,
        delivery
          ? serializeRecord(
              { kind: delivery.plan.kind, status: 'sending', at: delivery.at },
              'delivery state',
            )
          : null,
      ],
    );
    row = result.rows[0];
  } catch (error) {
    if (pgCode(error) !== 'P0002') throw error;
    const runId = (error as { detail?: string }).detail;
    throw new ColloquyError('RUN_NOT_FOUND', `No run "${runId}".`, { runId }, { cause: error });
  }
  if (!row) throw new ColloquyError('STORE_ERROR', 'colloquy_end_turn_or_rows returned no row.');
  if (row.by_rows) return undefined;
  return {
    session: row.session ? sessionOf(row.session, row.version ?? 0) : undefined,
    runs: row.ended_runs.map(runFromRow),
    ...(final !== null && row.final_seq !== null
      ? { finalMessage: storedMessage(final, row.final_seq) }
      : {}),
    ...(row.marked ? { marked: row.marked } : {}),
    inboxWaiting: row.inbox_waiting,
    watched: row.watched,
  };
}

/** `recordDeliveries` in one statement: see `TurnOperations.recordDeliveries` of `@colloquy/core`. */
export async function recordDeliveries(q: Queryable, records: readonly DeliveryRecord[]): Promise<void> {
  if (records.length === 0) return;
  await q.query(
    'SELECT colloquy_record_deliveries($1, $2, $3::json[], $4::bigint[], $5, $6::json[], $7::tsvector[])',
    [
      records.map((record) => record.runId),
      records.map((record) => record.sessionKey),
      records.map((record) => serializeRecord(record.state, 'delivery state')),
      records.map((record) => record.platformMessage?.seq ?? null),
      records.map((record) => record.platformMessage?.id ?? null),
      records.map((record) =>
        record.transcript ? serializeRecord(record.transcript, 'transcript message') : null,
      ),
      records.map((record) => (record.transcript ? searchVector(record.transcript) : null)),
    ],
  );
}
