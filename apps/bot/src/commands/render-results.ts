/**
 * Turns session-tool results into plain-text command replies. The tools' JSON is what the model
 * reads; people get the same facts as short lines.
 */
import type {
  SessionListRow,
  SessionStatusToolResult,
  SessionsHistoryResult,
  SessionsListToolResult,
  SessionsSearchToolResult,
  SessionsSendResult,
  SessionsSpawnResult,
  SubagentsResult,
} from '@colloquy/core/gateway';
import { renderTranscriptLines } from '../format/render-messages.js';
import { compactCount, duration, oneLine, timeAgo } from '../format/units.js';

/** A tool's refusal or mistake. */
export interface ToolProblem {
  status: 'error' | 'forbidden';
  error: string;
}

/**
 * True when a tool result is a refusal or a mistake (`{ status: 'error' | 'forbidden', error }`
 * without a `runId`).
 *
 * @param details - the tool result's details
 * @returns whether it is a problem
 */
export function isToolProblem(details: unknown): details is ToolProblem {
  if (typeof details !== 'object' || details === null) return false;
  const d = details as Record<string, unknown>;
  return (d.status === 'error' || d.status === 'forbidden') && typeof d.error === 'string' && !('runId' in d);
}

/**
 * A tool problem as a reply.
 *
 * @param problem - the problem
 * @returns `Not allowed: ...` or `Could not do that: ...`
 */
export function renderProblem(problem: ToolProblem): string {
  return problem.status === 'forbidden'
    ? `Not allowed: ${problem.error}`
    : `Could not do that: ${problem.error}`;
}

/**
 * A `sessions_list` result: one line per session.
 *
 * @param result - the tool result
 * @param now - epoch ms
 * @returns the reply
 */
export function renderSessionList(result: SessionsListToolResult, now: number): string {
  if (result.sessions.length === 0) return 'No sessions you can see yet.';
  const lines = result.sessions.map((row) => `• ${sessionLine(row, now)}`);
  const head = `${result.count} session${result.count === 1 ? '' : 's'}:`;
  const hidden = result.filtered ? `\n(${result.filtered.hidden} hidden: ${result.filtered.reason})` : '';
  return `${head}\n${lines.join('\n')}${hidden}`;
}

function sessionLine(row: SessionListRow, now: number): string {
  const name = row.label ?? row.displayName;
  const parts = [
    row.key,
    row.kind,
    row.channel,
    row.status ?? 'idle',
    timeAgo(row.updatedAt, now),
    ...(row.totalTokens ? [`${compactCount(row.totalTokens)} tokens`] : []),
  ];
  return `${parts.join(' · ')}${name ? ` — ${name}` : ''}`;
}

/**
 * A `sessions_history` result: one line per message.
 *
 * @param result - the tool result
 * @returns the reply
 */
export function renderHistory(result: SessionsHistoryResult): string {
  if (result.messages.length === 0) return `${result.sessionKey}: no messages yet.`;
  const notes = [
    result.redacted ? 'secrets redacted' : '',
    result.truncated ? 'long messages cut' : '',
    result.hardCapped ? 'older messages left out' : '',
  ].filter(Boolean);
  return [
    `Last ${result.messages.length} message${result.messages.length === 1 ? '' : 's'} of ${result.sessionKey}${notes.length ? ` (${notes.join(', ')})` : ''}:`,
    ...renderTranscriptLines(result.messages, 300),
  ].join('\n');
}

/**
 * A `sessions_search` result: each hit's session, message number, author and age, then its snippet.
 *
 * @param result - the tool result
 * @param now - epoch ms
 * @returns the reply
 */
export function renderSearch(result: SessionsSearchToolResult, now: number): string {
  const hidden = result.filtered ? `\n(${result.filtered.hidden} hidden: ${result.filtered.reason})` : '';
  if (result.hits.length === 0) return `No messages you can see match.${hidden}`;
  const lines = result.hits.map(
    (hit) =>
      `• ${hit.sessionKey} #${hit.messageIndex} · ${hit.role} · ${timeAgo(hit.at, now)}\n  ${hit.snippet}`,
  );
  const head = `${result.count} match${result.count === 1 ? '' : 'es'}${result.nextOffset !== undefined ? ' (more exist)' : ''}:`;
  return `${head}\n${lines.join('\n')}${hidden}`;
}

/**
 * A `session_status` result.
 *
 * @param status - the tool result
 * @returns the lines
 */
export function renderSessionStatus(status: SessionStatusToolResult): string[] {
  const usage = status.usage;
  return [
    `Session: ${status.sessionKey} (${status.channel}, ${status.status}${status.queueDepth > 0 ? `, ${status.queueDepth} queued` : ''})`,
    `Model: ${status.model}`,
    `Tokens: ${compactCount(usage.inputTokens)} in, ${compactCount(usage.outputTokens)} out, context ${compactCount(usage.contextTokens)}${status.estimatedCostUsd !== undefined ? ` · about $${status.estimatedCostUsd.toFixed(4)}` : ''}`,
    `Sending: ${status.sendPolicy === 'allow' ? 'on' : 'off'}`,
  ];
}

/**
 * A `sessions_send` result.
 *
 * @param result - the tool result
 * @returns the reply
 */
export function renderSendResult(result: SessionsSendResult): string {
  if (isToolProblem(result)) return renderProblem(result);
  if (result.status === 'accepted') {
    return `Sent to ${result.sessionKey} (run ${result.runId}). Its reply will be posted here.`;
  }
  if (result.status === 'ok') return `Reply from ${result.sessionKey}:\n${result.reply}`;
  return `The message was queued (run ${result.runId}) but: ${result.error}`;
}

/** The reply to `/subagents` and `/tree` when the session spawned none. */
export const NO_SUBAGENTS = 'No sub-agents yet. Start one with /spawn <task>.';

/**
 * A `subagents` result: the list of your sub-agents, or what steer or kill did.
 *
 * @param result - the tool result
 * @param now - epoch ms
 * @returns the reply
 */
export function renderSubagents(result: SubagentsResult, now: number): string {
  if (isToolProblem(result)) return renderProblem(result);
  if (result.action === 'steer') return `Steered ${result.sessionKey} (run ${result.runId}).`;
  if (result.action === 'kill') {
    const keys = result.killed.map((k) => k.sessionKey).join(', ');
    const head = result.count === 0 ? 'Nothing was running.' : `Stopped ${result.count} run(s): ${keys}.`;
    return result.note ? `${head} ${result.note}` : head;
  }
  if (result.subagents.length === 0) return NO_SUBAGENTS;
  const lines = result.subagents.map((row) => {
    const facts = [
      row.status,
      row.runtimeMs !== undefined
        ? duration(row.runtimeMs)
        : row.startedAt
          ? `started ${timeAgo(row.startedAt, now)}`
          : '',
      row.tokens ? `${compactCount(row.tokens.total)} tokens` : '',
      row.sessionKey,
    ].filter(Boolean);
    const name = row.label ?? (row.task ? oneLine(row.task, 50) : 'sub-agent');
    return `${'  '.repeat(Math.max(0, row.depth - 1))}#${row.index} ${name} · ${facts.join(' · ')}`;
  });
  return [
    `${result.count} sub-agent${result.count === 1 ? '' : 's'}, ${result.active} active:`,
    ...lines,
  ].join('\n');
}

/**
 * A `sessions_spawn` result.
 *
 * @param result - the tool result
 * @returns the reply
 */
export function renderSpawn(result: SessionsSpawnResult): string {
  if (isToolProblem(result)) return renderProblem(result);
  return `Started a sub-agent: ${result.childSessionKey} (run ${result.runId}, ${result.model}). It will announce its result here.`;
}
