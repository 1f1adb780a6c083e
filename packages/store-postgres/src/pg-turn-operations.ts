import {
  ColloquyError,
  type SessionRecord,
  type StoredMessage,
  type TranscriptMessage,
} from '@colloquy/core';
import type { RunRecord } from '@colloquy/core/gateway';
import {
  type DeliveryRecord,
  type InboundCommit,
  type InboundCommitResult,
  type PlannedDelivery,
  type SessionPatch,
  serializeRecord,
  type TurnEnd,
  type TurnEndResult,
} from '@colloquy/core/store';
import { pgCode } from './pg-errors.js';
import type { Queryable } from './pg-operations.js';
import { searchVector } from './search-vector.js';

// The turn operations on PostgreSQL: each is ONE statement, a call of its function (schema 8, see
// turn-functions-sql.ts), so it costs one round trip and commits on its own, or joins the open
// transaction of the connection it runs on.

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
 * @throws `CONFLICT` when the run id was stored meanwhile by a concurrent commit, or the session id
 *   of a new session belongs to another session
 */
export async function commitInbound(q: Queryable, inbound: InboundCommit): Promise<InboundCommitResult> {
  const { create, update } = inbound.session;
  const { begin } = inbound;
  const updated = splitPatch(update);
  const begun = begin ? splitPatch(begin.session) : undefined;
  const input = begin ? serializeRecord(begin.input, 'transcript message') : null;
  const queuedRun = serializeRecord(inbound.run, 'run');
  const begunRun = begin ? serializeRecord(begin.run, 'run') : null;
  type Row = {
    outcome: 'duplicate' | 'queued' | 'begun';
    session: SessionRecord | null;
    version: string | null;
    input_seq: string | null;
  };
  let row: Row | undefined;
  try {
    const result = await q.query<Row>(
      'SELECT outcome, session, version, input_seq FROM colloquy_commit_inbound($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)',
      [
        create.key,
        serializeRecord(create, 'session'),
        updated.set,
        updated.cleared,
        queuedRun,
        begun?.set ?? null,
        begun?.cleared ?? null,
        input,
        begin ? searchVector(begin.input) : null,
        begunRun,
      ],
    );
    row = result.rows[0];
  } catch (error) {
    throw conflictOf(error, create, inbound.run.runId) ?? error;
  }
  if (!row || row.outcome === 'duplicate' || !row.session) return { status: 'duplicate' };
  const session = sessionOf(row.session, row.version ?? 0);
  if (row.outcome === 'begun' && begunRun !== null && input !== null && row.input_seq !== null) {
    return {
      status: 'begun',
      session,
      run: JSON.parse(begunRun) as RunRecord,
      input: storedMessage(input, row.input_seq),
    };
  }
  return { status: 'queued', session, run: JSON.parse(queuedRun) as RunRecord };
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
 * @throws `RUN_NOT_FOUND` when a run of the turn does not exist (nothing is written)
 */
export async function endTurn(q: Queryable, end: TurnEnd): Promise<TurnEndResult> {
  const patch = splitPatch(end.session);
  const final = end.finalMessage ? serializeRecord(end.finalMessage, 'transcript message') : null;
  const usage = end.add?.usage;
  type Row = {
    session: SessionRecord | null;
    version: string | null;
    runs: RunRecord[];
    final_seq: string | null;
    marked: PlannedDelivery | null;
    inbox_waiting: boolean;
    watched: boolean;
  };
  let row: Row | undefined;
  try {
    const result = await q.query<Row>(
      `SELECT session, version, runs, final_seq, marked, inbox_waiting, watched
       FROM colloquy_end_turn($1, $2, $3, $4, $5::jsonb[], $6, $7, $8, $9, $10, $11, $12)`,
      [
        end.sessionKey,
        final,
        end.finalMessage ? searchVector(end.finalMessage) : null,
        end.runs.map((run) => run.runId),
        end.runs.map((run) => serializeRecord(run.patch, 'run')),
        patch.set,
        patch.cleared,
        usage
          ? serializeRecord(
              { ...usage, totalTokens: usage.totalTokens || usage.inputTokens + usage.outputTokens },
              'token usage',
            )
          : null,
        end.add?.costUsd ?? null,
        end.delivery?.runId ?? null,
        end.delivery ? serializeRecord(end.delivery.plan, 'planned delivery') : null,
        end.delivery?.at ?? null,
      ],
    );
    row = result.rows[0];
  } catch (error) {
    if (pgCode(error) !== 'P0002') throw error;
    const runId = (error as { detail?: string }).detail;
    throw new ColloquyError('RUN_NOT_FOUND', `No run "${runId}".`, { runId }, { cause: error });
  }
  if (!row) throw new ColloquyError('STORE_ERROR', 'colloquy_end_turn returned no row.');
  return {
    session: row.session ? sessionOf(row.session, row.version ?? 0) : undefined,
    runs: row.runs,
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
    'SELECT colloquy_record_deliveries($1, $2, $3::jsonb[], $4::bigint[], $5, $6::json[], $7::tsvector[])',
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
