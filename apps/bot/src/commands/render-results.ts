/**
 * Turns session-tool results into plain-text command replies. The tools' JSON is what the model
 * reads; people get the same facts as short lines.
 */
import type {
  SessionListRow,
  SessionStatusToolResult,
  SessionsHistoryResult,
  SessionsListToolResult,
  SessionsSendResult,
} from '@colloquy/core';
import { renderTranscriptLines } from '../format/render-messages.js';
import { compactCount, duration, timeAgo } from '../format/units.js';

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

/**
 * Generic rendering for tools without a dedicated view (sessions_spawn, subagents): the JSON's
 * scalar fields as `name: value` lines, arrays as bullet lists.
 *
 * @param details - the tool result's details
 * @param now - epoch ms
 * @returns the reply
 */
export function renderGeneric(details: unknown, now: number): string {
  if (isToolProblem(details)) return renderProblem(details);
  if (typeof details !== 'object' || details === null) return String(details);
  const lines: string[] = [];
  for (const [key, value] of Object.entries(details as Record<string, unknown>)) {
    if (value === undefined || value === null) continue;
    if (Array.isArray(value)) {
      lines.push(`${key}: ${value.length === 0 ? 'none' : ''}`.trimEnd());
      for (const item of value.slice(0, 30)) lines.push(`• ${scalarLine(item, now)}`);
    } else {
      lines.push(`${key}: ${scalarLine(value, now)}`);
    }
  }
  return lines.join('\n');
}

function scalarLine(value: unknown, now: number): string {
  if (typeof value !== 'object' || value === null) return String(value);
  return Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined && v !== null && typeof v !== 'object')
    .map(([k, v]) => {
      if (typeof v === 'number' && /At$/.test(k)) return `${k} ${timeAgo(v, now)}`;
      if (typeof v === 'number' && /Ms$/.test(k)) return `${k.replace(/Ms$/, '')} ${duration(v)}`;
      return `${k} ${String(v)}`;
    })
    .join(' · ');
}
