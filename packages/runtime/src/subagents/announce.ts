import type { DeliveryContext, SessionRecord, TranscriptMessage } from '@colloquy/core';
import type { RunRecord, RunStatus, SessionOrigin } from '@colloquy/core/gateway';
import { ANNOUNCE_SKIP, subagentMetaOf, truncateText } from '@colloquy/core/internal';
import type { StoreTransaction } from '@colloquy/core/store';
import { textOf } from '../agent/build-prompt.js';
import { type AnnounceTrace, announceTraceOf } from '../telemetry/channel-spans.js';

/** The announce status: from the runtime, never from model text. */
export type AnnounceStatus = 'ok' | 'error' | 'timeout' | 'killed' | 'interrupted';

/** How the chat copy of an announce ended (kept on the outbox row). */
export interface ChatOutcome {
  /** How the chat copy ended. */
  outcome: 'delivered' | 'denied' | 'skipped' | 'failed';
  /** Epoch milliseconds the outcome was recorded. */
  at: number;
  /** A human sentence explaining the outcome. */
  reason?: string;
  /** The platform message id, when it was delivered. */
  messageId?: string;
}

/** The announce of one finished sub-agent run, as stored in the outbox row's `payload`. */
export interface AnnouncePayload {
  kind: 'subagent-announce';
  status: AnnounceStatus;
  /** The final reply; if empty, the latest tool result. */
  result: string;
  resultSource: 'reply' | 'tool' | 'none';
  notes: string[];
  stats: AnnounceStats;
  childSessionKey: string;
  runId: string;
  label?: string;
  /** Where the requester's chat is (captured at spawn). */
  origin?: SessionOrigin;
  /** The rendered message (inbox and chat). */
  text: string;
  /** True when the child answered exactly `ANNOUNCE_SKIP`. */
  silent: boolean;
  /** Filled while delivering. */
  chat?: ChatOutcome;
  /** Set when the requester was gone and the result went to its owner's main session. */
  parkedIn?: string;
  /**
   * True when the child needs cleanup once announced (`cleanup: "delete"`, or attachments to
   * remove), so delivery can skip reading the child session otherwise.
   */
  needsCleanup?: boolean;
  /** Where the child run stands in its spawn tree's trace, when it was traced. */
  trace?: AnnounceTrace;
  /**
   * Set when a thread-bound child posted this result in its thread itself: the requester's chat
   * gets a pointer to the thread, not the result again.
   */
  postedIn?: ResultThread;
}

/** The thread a thread-bound child posted its result in. */
export interface ResultThread {
  /** The channel plugin id. */
  channel: string;
  /** The chat that holds the thread. */
  to: string;
  /** The thread (or forum topic) id. */
  threadId: string;
}

/** The stats line's figures. */
export interface AnnounceStats {
  /** Milliseconds from the child run's start to its end. */
  runtimeMs: number;
  /** Prompt tokens of the child run. */
  inputTokens: number;
  /** Generated tokens of the child run. */
  outputTokens: number;
  /** All tokens of the child run. */
  totalTokens: number;
  /** The child's internal session key. */
  sessionKey: string;
  /** The child's session id, while the session exists. */
  sessionId?: string;
  /** A best-effort locator of the child's transcript (see `Store.transcriptLocator`). */
  transcript?: string;
  /** The child run's model cost in US dollars, when priced. */
  costUsd?: number;
}

/** Results longer than this are cut (the full text stays in the child's transcript). */
export const ANNOUNCE_RESULT_MAX_CHARS = 8000;

const STATUS_OF: Partial<Record<RunStatus, AnnounceStatus>> = {
  done: 'ok',
  error: 'error',
  timeout: 'timeout',
  killed: 'killed',
  interrupted: 'interrupted',
};

/**
 * Builds the announce of a finished sub-agent run: Status from the run's status, Result from its
 * reply (else its latest tool result), Notes and the stats line. Reads the transcript tail only
 * when the reply is empty. Runs inside the transaction that ends the run.
 *
 * @param store - the open transaction
 * @param run - the ended run
 * @param session - the child session (undefined when it was deleted)
 * @param locator - the child's transcript locator, for the stats line
 * @returns the payload
 */
export async function buildAnnounce(
  store: StoreTransaction,
  run: RunRecord,
  session: SessionRecord | undefined,
  locator: string | undefined,
): Promise<AnnouncePayload> {
  const status = STATUS_OF[run.status] ?? 'error';
  const reply = (run.reply ?? '').trim();
  const silent = status === 'ok' && reply === ANNOUNCE_SKIP;
  let result = reply;
  let resultSource: AnnouncePayload['resultSource'] = reply ? 'reply' : 'none';
  if (!reply && session) {
    const tool = await latestToolResult(store, session.key, run.runId);
    if (tool) {
      result = tool;
      resultSource = 'tool';
    }
  }
  const notes: string[] = [];
  if (status !== 'ok' && run.error) notes.push(run.error);
  if (resultSource === 'tool') notes.push('No final reply; Result is the latest tool result.');
  if (resultSource === 'none')
    notes.push(status === 'ok' ? 'The sub-agent gave an empty reply.' : 'No result.');
  const cut = truncateText(result, ANNOUNCE_RESULT_MAX_CHARS);
  if (cut.truncated) notes.push('Result was cut; read the full reply with sessions_history.');
  const started = run.startedAt ?? run.createdAt;
  const stats: AnnounceStats = {
    runtimeMs: Math.max(0, (run.endedAt ?? run.updatedAt) - started),
    inputTokens: run.usage?.inputTokens ?? 0,
    outputTokens: run.usage?.outputTokens ?? 0,
    totalTokens: run.usage?.totalTokens ?? 0,
    sessionKey: run.sessionKey,
    ...(session ? { sessionId: session.sessionId } : {}),
    ...(run.costUsd !== undefined ? { costUsd: run.costUsd } : {}),
  };
  if (session && locator) stats.transcript = locator;
  const payload: AnnouncePayload = {
    kind: 'subagent-announce',
    status,
    result: cut.text,
    resultSource,
    notes,
    stats,
    childSessionKey: run.sessionKey,
    runId: run.runId,
    text: '',
    silent,
    ...(session?.label ? { label: session.label } : {}),
    ...(session?.requesterOrigin ? { origin: session.requesterOrigin } : {}),
  };
  const postedIn = resultThreadOf(run, session, status, cut.text, silent);
  if (postedIn) payload.postedIn = postedIn;
  const meta = session ? subagentMetaOf(session) : undefined;
  if (meta && (meta.cleanup === 'delete' || meta.attachments)) payload.needsCleanup = true;
  const trace = announceTraceOf(run.meta);
  if (trace) payload.trace = trace;
  payload.text = renderAnnounce(payload);
  return payload;
}

/**
 * The announce as a message: a heading, `Status`, `Result`, `Notes` and the stats line.
 *
 * @param payload - the announce
 * @returns the text
 */
export function renderAnnounce(payload: Omit<AnnouncePayload, 'text'>): string {
  const name = payload.label ? `"${payload.label}" (${payload.childSessionKey})` : payload.childSessionKey;
  const s = payload.stats;
  const stats = [
    `runtime ${formatDuration(s.runtimeMs)}`,
    `tokens ${s.inputTokens} in / ${s.outputTokens} out / ${s.totalTokens} total`,
    `sessionKey ${s.sessionKey}`,
    ...(s.sessionId ? [`sessionId ${s.sessionId}`] : []),
    ...(s.transcript ? [`transcript ${s.transcript}`] : []),
    ...(s.costUsd !== undefined ? [`cost $${s.costUsd.toFixed(4)}`] : []),
  ];
  const thread = payload.postedIn;
  return [
    `Sub-agent ${name} finished.`,
    `Status: ${payload.status}`,
    ...(thread
      ? [
          `Posted: the sub-agent already posted this result in its thread ${thread.threadId} (${thread.channel}).`,
        ]
      : []),
    `Result:\n${payload.result || '(none)'}`,
    `Notes: ${payload.notes.length > 0 ? payload.notes.join(' ') : 'none'}`,
    `Stats: ${stats.join(' · ')}`,
  ].join('\n');
}

/**
 * The inbox message of an announce: a user-role message marked as an announce, so the model never
 * takes it for its human.
 *
 * @param payload - the announce
 * @param at - epoch ms
 * @returns the transcript message
 */
export function announceMessage(payload: AnnouncePayload, at: number): TranscriptMessage {
  return {
    role: 'user',
    content: payload.text,
    timestamp: at,
    provenance: {
      kind: 'announce',
      sourceSessionKey: payload.childSessionKey,
      sourceRunId: payload.runId,
      sourceTool: 'sessions_spawn',
    },
    details: {
      announce: {
        status: payload.status,
        runId: payload.runId,
        fallback: announceFallback(payload),
        ...(payload.postedIn ? { postedIn: payload.postedIn } : {}),
      },
    },
  };
}

/** How much of a result the plain fallback line carries. */
export const ANNOUNCE_FALLBACK_MAX_CHARS = 500;

/**
 * The plain line the requester's chat gets when the requester cannot answer the announce itself
 * (no model, or its turn failed): `<label> finished (<status>): <result, at most 500 chars>`.
 * It names no ids and no paths.
 *
 * @param payload - the announce
 * @returns the line
 */
export function announceFallback(
  payload: Pick<AnnouncePayload, 'label' | 'status' | 'result' | 'postedIn'>,
): string {
  if (payload.postedIn)
    return `${payload.label ?? 'A sub-agent'} finished (${payload.status}): the result is in its thread.`;
  const flat = payload.result.replace(/\s+/g, ' ').trim() || '(no result)';
  const cut =
    flat.length <= ANNOUNCE_FALLBACK_MAX_CHARS
      ? flat
      : `${flat.slice(0, ANNOUNCE_FALLBACK_MAX_CHARS - 1).replace(/[\uD800-\uDBFF]$/, '')}…`;
  return `${payload.label ?? 'A sub-agent'} finished (${payload.status}): ${cut}`;
}

/**
 * Where the chat copy goes: the requester's chat captured at spawn, when complete.
 *
 * @param origin - the requester origin
 * @returns the delivery context, or undefined when the requester has no chat
 */
export function originTarget(origin: SessionOrigin | undefined): DeliveryContext | undefined {
  if (!origin?.channel || !origin.to || !origin.accountId) return undefined;
  return {
    channel: origin.channel,
    to: origin.to,
    accountId: origin.accountId,
    ...(origin.threadId ? { threadId: origin.threadId } : {}),
  };
}

/**
 * The thread a child's run posted its result in: a thread-bound child's spawned run delivers its
 * reply to its thread (see `announceRequesterOf`), so a result it ended with is already there.
 */
function resultThreadOf(
  run: RunRecord,
  session: SessionRecord | undefined,
  status: AnnounceStatus,
  result: string,
  silent: boolean,
): ResultThread | undefined {
  const to = session?.deliveryContext;
  if (!run.deliver || to?.threadId === undefined || status !== 'ok' || silent) return undefined;
  if (result === '' || (run.reply ?? '').trim() === '') return undefined;
  return { channel: to.channel, to: to.to, threadId: to.threadId };
}

/** The idempotency key of an announce in the requester's inbox. */
export function announceInboxId(childSessionKey: string, runId: string): string {
  return `announce:${childSessionKey}:${runId}`;
}

async function latestToolResult(
  store: StoreTransaction,
  sessionKey: string,
  runId: string,
): Promise<string | undefined> {
  const tail = await store.readTail(sessionKey, 50);
  for (let i = tail.length - 1; i >= 0; i--) {
    const message = tail[i]!;
    if (message.role === 'toolResult' && (message.runId === undefined || message.runId === runId)) {
      const text = textOf(message.content).trim();
      if (text) return text;
    }
  }
  return undefined;
}

function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes} min ${Math.round((ms % 60_000) / 1000)} s`;
}
