import { basename } from 'node:path';
import {
  ColloquyError,
  type SessionRecord,
  type StoredMessage,
  type TranscriptMessage,
} from '@colloquy/core';
import { serializeRecord, type TailOptions } from '@colloquy/core/store';
import { sqlLimit } from '../session-list-plan.js';
import { sessionNotFound } from '../sqlite-errors.js';
import {
  formatTranscriptLocator,
  isTranscriptLocator,
  parseTranscriptLocator,
} from '../transcript-locator.js';
import { parseOptional } from './record-json.js';
import type { Statements } from './statements.js';

// The transcripts: appends, tails, counts, locators and export batches. (The single-message
// append outside a transaction belongs to the engine: it joins the group-commit batch itself.)

const MAX_SEQ = Number.MAX_SAFE_INTEGER;

/**
 * Appends messages after the session's last `seq`, inside the caller's transaction.
 *
 * @throws `SESSION_NOT_FOUND` when there is no such session
 */
export function appendMessages(
  s: Statements,
  sessionKey: string,
  messages: readonly TranscriptMessage[],
): StoredMessage[] {
  if (s.sessionExists.get(sessionKey) === undefined) throw sessionNotFound(sessionKey);
  let seq = s.lastSeq.get(sessionKey) ?? 0;
  const rows = messages.map((message) => {
    seq += 1;
    return { seq, json: serializeRecord({ ...message, seq }, 'transcript message') };
  });
  for (const row of rows) s.insertMessage.run(sessionKey, row.seq, row.json);
  return rows.map((row) => JSON.parse(row.json) as StoredMessage);
}

/**
 * Appends one message to a session known to exist, inside the caller's transaction, and returns it
 * as stored (a copy of `message` with its `seq`; nothing is read back).
 */
export function appendMessage(s: Statements, sessionKey: string, message: TranscriptMessage): StoredMessage {
  const stored: StoredMessage = { ...message, seq: (s.lastSeq.get(sessionKey) ?? 0) + 1 };
  s.insertMessage.run(sessionKey, stored.seq, serializeRecord(stored, 'transcript message'));
  return stored;
}

/**
 * The tail walks the `(session_key, seq)` index back from a bound. An `offset` moves the bound
 * instead of skipping rows: a session's seqs are contiguous, so the newest `offset` messages
 * below `beforeSeq` are exactly those from `min(beforeSeq, last + 1) - offset` up, and a page
 * deep in a long transcript costs what the first page costs.
 */
export function readTail(
  s: Statements,
  sessionKey: string,
  limit: number,
  options: TailOptions,
): StoredMessage[] {
  const count = sqlLimit(limit);
  if (count === 0) return [];
  let bound = options.beforeSeq ?? MAX_SEQ;
  const offset = options.offset !== undefined && options.offset > 0 ? Math.floor(options.offset) : 0;
  if (offset > 0) {
    const last = s.lastSeq.get(sessionKey);
    if (last === undefined) return [];
    bound = Math.min(bound, last + 1) - offset;
  }
  const rows = s.tail.all(sessionKey, bound, options.afterSeq ?? Number.MIN_SAFE_INTEGER, count);
  const out = new Array<StoredMessage>(rows.length);
  for (let i = 0; i < rows.length; i++) out[rows.length - 1 - i] = JSON.parse(rows[i]!) as StoredMessage;
  return out;
}

/**
 * The number of messages in a session's transcript, in O(log n): the store only appends and only
 * deletes whole transcripts, so a session's `seq` values are contiguous.
 */
export function countMessages(s: Statements, sessionKey: string): number {
  const last = s.lastSeq.get(sessionKey);
  if (last === undefined) return 0;
  return last - (s.firstSeq.get(sessionKey) ?? last) + 1;
}

/** Records the platform's id of a stored message. */
export function setMessagePlatformId(
  s: Statements,
  sessionKey: string,
  seq: number,
  platformMessageId: string,
): void {
  s.setPlatformId.run(platformMessageId, sessionKey, seq);
}

/** Where a session's transcript lives in `file`: `sqlite:<file name>#<sessionId>`. */
export function transcriptLocator(file: string, session: SessionRecord): string {
  // The file's name, not its path: a locator is shown to models and chats, and the database
  // lives in the state directory it is relative to.
  return formatTranscriptLocator(basename(file), session.sessionId);
}

/**
 * The session key a transcript reference names: a session key, a `sessionId`, or a locator.
 *
 * @throws `SESSION_NOT_FOUND` when no session matches; `INVALID_ARGUMENT` for another file's locator
 */
export function resolveSessionRef(s: Statements, file: string, ref: string): string {
  if (s.sessionExists.get(ref) !== undefined) return ref;
  let sessionId = ref;
  if (isTranscriptLocator(ref)) {
    const located = parseTranscriptLocator(ref);
    if (located.file !== file && located.file !== basename(file)) {
      throw new ColloquyError(
        'INVALID_ARGUMENT',
        `The locator ${ref} points at ${located.file}, not at this store (${file}); open that file instead.`,
        { locator: ref, file },
      );
    }
    sessionId = located.sessionId;
  }
  const record = parseOptional<SessionRecord>(s.sessionById.get(sessionId));
  if (record === undefined) {
    throw new ColloquyError(
      'SESSION_NOT_FOUND',
      `No session "${ref}" in ${file}: pass a session key, a sessionId or a transcript locator.`,
      { ref, file },
    );
  }
  return record.key;
}

/** Up to `limit` stored messages (as JSON lines) of a session with `seq > after`, in order. */
export function transcriptBatch(
  s: Statements,
  sessionKey: string,
  after: number,
  limit: number,
): { seq: number; line: string }[] {
  return s.messagesAfter
    .all(sessionKey, after, limit)
    .map((row) => ({ seq: row.seq, line: `${row.message}\n` }));
}
