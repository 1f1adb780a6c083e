/**
 * The spawn tree (`sessions.tree`) as indented plain text: one line per session with its status,
 * time and tokens, failures marked. Shared by `colloquy tree` and, later, the `/tree` slash command.
 */
import type { SessionsTreeResult, SpawnTreeNode, SpawnTreeRun } from '@colloquy/core/gateway';
import { compactCount, duration, oneLine } from './units.js';

/** Run states that end a run without its answer. */
const FAILED = new Set(['error', 'timeout', 'killed', 'interrupted']);
/** The longest error text shown under a failed session. */
const ERROR_CHARS = 160;

/** What a session's runs add up to. */
export interface NodeTotals {
  /** Milliseconds its runs ran (the running one up to the snapshot). */
  durationMs: number;
  /** Input tokens of its runs. */
  inputTokens: number;
  /** Output tokens of its runs. */
  outputTokens: number;
  /** Tool calls of its runs. */
  toolCalls: number;
}

/**
 * Sums a session's runs.
 *
 * @param node - a session of the tree
 * @returns its time, tokens and tool calls
 */
export function nodeTotals(node: SpawnTreeNode): NodeTotals {
  const totals: NodeTotals = { durationMs: 0, inputTokens: 0, outputTokens: 0, toolCalls: 0 };
  for (const run of node.runs) {
    totals.durationMs += run.durationMs ?? 0;
    totals.inputTokens += run.usage?.inputTokens ?? 0;
    totals.outputTokens += run.usage?.outputTokens ?? 0;
    totals.toolCalls += run.toolCalls.length;
  }
  return totals;
}

/**
 * The latest run that failed, when the session's latest run failed: what a failure mark explains.
 *
 * @param node - a session of the tree
 * @returns the failed run, or `undefined` when the session did not end in a failure
 */
export function failedRun(node: SpawnTreeNode): SpawnTreeRun | undefined {
  const latest = node.runs.at(-1);
  return latest && FAILED.has(latest.status) ? latest : undefined;
}

/**
 * Renders the tree, the root first and each session under its spawner:
 * `├─ research  done  2 runs  4.1s  1.2k in / 300 out  2 tools  → delivered`, and under a failed
 * session a `✗ <status>: <error>` line.
 *
 * @param tree - a `sessions.tree` result
 * @returns the lines
 */
export function renderSpawnTree(tree: SessionsTreeResult): string[] {
  const children = new Map<string | undefined, SpawnTreeNode[]>();
  for (const node of tree.nodes) {
    const siblings = children.get(node.parentKey) ?? [];
    siblings.push(node);
    children.set(node.parentKey, siblings);
  }
  const lines: string[] = [];
  const walk = (node: SpawnTreeNode, lead: string, branch: string): void => {
    lines.push(`${lead}${branch}${nodeLine(node)}`);
    const below = `${lead}${branch === '' ? '' : branch === '└─ ' ? '   ' : '│  '}`;
    const failed = failedRun(node);
    const kids = children.get(node.sessionKey) ?? [];
    if (failed) {
      const error = failed.error ? `: ${oneLine(failed.error, ERROR_CHARS)}` : '';
      lines.push(`${below}${kids.length > 0 ? '│  ' : '   '}✗ ${failed.status}${error}`);
    }
    for (const [index, kid] of kids.entries()) walk(kid, below, index === kids.length - 1 ? '└─ ' : '├─ ');
  };
  const root = tree.nodes.find((node) => node.sessionKey === tree.rootKey);
  if (root) walk(root, '', '');
  if (tree.truncated) lines.push(`(only the first ${tree.nodes.length} sessions of the tree)`);
  return lines;
}

function nodeLine(node: SpawnTreeNode): string {
  const totals = nodeTotals(node);
  const name =
    node.depth === 0 || node.label === undefined ? node.sessionKey : `${node.label} (${node.sessionKey})`;
  const parts = [name, node.status];
  const runs = node.runs.length;
  parts.push(`${runs}${node.olderRuns ? '+' : ''} run${runs === 1 && !node.olderRuns ? '' : 's'}`);
  if (runs > 0) parts.push(duration(totals.durationMs));
  if (totals.inputTokens + totals.outputTokens > 0) {
    parts.push(`${compactCount(totals.inputTokens)} in / ${compactCount(totals.outputTokens)} out`);
  }
  if (totals.toolCalls > 0) parts.push(`${totals.toolCalls} tool${totals.toolCalls === 1 ? '' : 's'}`);
  // The latest announce: a sub-agent's later runs (woken by its own children) announce nothing.
  const announce = node.runs.filter((run) => run.announce).at(-1)?.announce;
  if (announce) parts.push(`→ ${announce.state}`);
  return parts.join('  ');
}
