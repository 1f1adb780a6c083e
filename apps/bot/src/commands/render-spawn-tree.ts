import type { SubagentRow, SubagentsResult } from '@colloquy/core/gateway';
import { compactCount, duration, oneLine } from '../format/units.js';
import { isToolProblem, renderProblem } from './render-results.js';

/**
 * The spawn tree below a session, as `/tree` prints it: each sub-agent under the session that
 * spawned it, with its label, status, duration and tokens, drawn with tree lines.
 *
 * ```
 * 3 sub-agents, 1 active:
 * ├─ research · running · 40.2s · 1.2k tokens
 * │  └─ sources · done · 12.0s · 800 tokens
 * └─ summary · queued
 * ```
 *
 * @param result - a `subagents` list result (the rows come from core's `descendantsOf`)
 * @returns the reply
 */
export function renderSpawnTree(result: SubagentsResult): string {
  if (isToolProblem(result)) return renderProblem(result);
  if (result.action !== 'list') return '';
  if (result.subagents.length === 0) return 'No sub-agents yet. Start one with /spawn <task>.';
  const keys = new Set(result.subagents.map((row) => row.sessionKey));
  const children = new Map<string, SubagentRow[]>();
  for (const row of result.subagents) {
    // Direct children hang off the root (whatever key the requester has).
    const parent = row.depth === 1 || !keys.has(row.spawnedBy) ? '' : row.spawnedBy;
    children.set(parent, [...(children.get(parent) ?? []), row]);
  }
  const lines = [`${result.count} sub-agent${result.count === 1 ? '' : 's'}, ${result.active} active:`];
  const draw = (parent: string, indent: string): void => {
    const rows = children.get(parent) ?? [];
    rows.forEach((row, i) => {
      const last = i === rows.length - 1;
      lines.push(`${indent}${last ? '└─' : '├─'} ${describe(row)}`);
      draw(row.sessionKey, `${indent}${last ? '   ' : '│  '}`);
    });
  };
  draw('', '');
  return lines.join('\n');
}

function describe(row: SubagentRow): string {
  const name = row.label ?? (row.task ? oneLine(row.task, 50) : 'sub-agent');
  const facts = [
    row.status,
    row.runtimeMs !== undefined ? duration(row.runtimeMs) : '',
    row.tokens ? `${compactCount(row.tokens.total)} tokens` : '',
  ].filter(Boolean);
  return [name, ...facts].join(' · ');
}
