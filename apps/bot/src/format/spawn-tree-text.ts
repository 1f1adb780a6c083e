/**
 * The spawn tree as indented text, drawn one way for its two readers: `colloquy tree` prints a
 * `sessions.tree` result with every detail (runs, tokens in and out, tools, announces, failures),
 * and `/tree` prints the `subagents` list in a chat, briefer and cut to fit one platform message.
 */
import type {
  SessionsTreeResult,
  SpawnTreeNode,
  SpawnTreeRun,
  SubagentRow,
  SubagentsResult,
} from '@colloquy/core/gateway';
import { compactCount, duration, oneLine } from './units.js';

/** Run states that end a run without its answer. */
const FAILED = new Set(['error', 'timeout', 'killed', 'interrupted']);
/** The longest error text shown under a failed session. */
const ERROR_CHARS = 160;
/** The longest sub-agent name in a chat tree. */
const CHAT_NAME_CHARS = 50;

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

/** A `subagents` list result: what `/tree` draws. */
export type SubagentsList = Extract<SubagentsResult, { action: 'list' }>;

/** Options of {@link renderSpawnTreeForChat}. */
export interface ChatTreeOptions {
  /**
   * The most characters of the reply: the platform's `capabilities.maxTextLength`. Sub-agents that do
   * not fit are left out and counted on the last line. Default: no limit.
   */
  maxChars?: number;
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
 * The tree for `colloquy tree`, the root first and each session under its spawner:
 * `├─ research (<key>)  done  2 runs  4.1s  1.2k in / 300 out  2 tools  → delivered`, and under a
 * failed session a `✗ <status>: <error>` line.
 *
 * @param tree - a `sessions.tree` result
 * @returns the lines
 */
export function renderSpawnTree(tree: SessionsTreeResult): string[] {
  const below = groupBy(tree.nodes, (node) => node.parentKey);
  const toDrawn = (node: SpawnTreeNode): DrawnNode => {
    const failed = failedRun(node);
    const error = failed?.error ? `: ${oneLine(failed.error, ERROR_CHARS)}` : '';
    return {
      line: cliLine(node),
      ...(failed ? { failure: `✗ ${failed.status}${error}` } : {}),
      children: (below.get(node.sessionKey) ?? []).map(toDrawn),
    };
  };
  const root = tree.nodes.find((node) => node.sessionKey === tree.rootKey);
  const lines = root ? drawTree(toDrawn(root)).flat() : [];
  if (tree.truncated) lines.push(`(only the first ${tree.nodes.length} sessions of the tree)`);
  return lines;
}

/**
 * The tree for `/tree` in a chat: a count, then each sub-agent under the one that spawned it with
 * its status, duration and tokens. Cut to `maxChars` when given.
 *
 * ```
 * 3 sub-agents, 1 active:
 * ├─ research · running · 40.2s · 1.2k tokens
 * │  └─ sources · done · 12.0s · 800 tokens
 * └─ summary · queued
 * ```
 *
 * @param list - a `subagents` list with at least one row (the rows come from core's `descendantsOf`)
 * @param options - the platform's size cap
 * @returns the reply
 */
export function renderSpawnTreeForChat(list: SubagentsList, options: ChatTreeOptions = {}): string {
  const keys = new Set(list.subagents.map((row) => row.sessionKey));
  // Direct children hang off the top (whatever key the requester has), as do rows whose spawner is not listed.
  const below = groupBy(list.subagents, (row) =>
    row.depth === 1 || !keys.has(row.spawnedBy) ? undefined : row.spawnedBy,
  );
  const toDrawn = (row: SubagentRow): DrawnNode => ({
    line: chatLine(row),
    children: (below.get(row.sessionKey) ?? []).map(toDrawn),
  });
  const head = `${list.count} sub-agent${list.count === 1 ? '' : 's'}, ${list.active} active:`;
  const blocks = drawTree({ line: head, children: (below.get(undefined) ?? []).map(toDrawn) });
  return fitBlocks(blocks, options.maxChars ?? Number.POSITIVE_INFINITY).join('\n');
}

/** One session as drawn: its line, a failure line under it, and the sessions it spawned. */
interface DrawnNode {
  line: string;
  failure?: string;
  children: DrawnNode[];
}

/**
 * Draws a tree with `├─`, `└─` and `│` lines, the top at the left margin and its children below it
 * from the margin on. A failure line sits under its session's name, with the line to the session's
 * children running past it.
 *
 * @returns one block of lines per node, depth first
 */
function drawTree(top: DrawnNode): string[][] {
  const blocks: string[][] = [];
  const walk = (node: DrawnNode, lead: string, branch: string): void => {
    const below = `${lead}${branch === '' ? '' : branch === '└─ ' ? '   ' : '│  '}`;
    const block = [`${lead}${branch}${node.line}`];
    if (node.failure) block.push(`${below}${node.children.length > 0 ? '│  ' : '   '}${node.failure}`);
    blocks.push(block);
    node.children.forEach((child, index) => {
      walk(child, below, index === node.children.length - 1 ? '└─ ' : '├─ ');
    });
  };
  walk(top, '', '');
  return blocks;
}

/**
 * Keeps the first block (the top) and as many of the next blocks as fit in `maxChars` with a last
 * line counting the ones left out.
 */
function fitBlocks(blocks: readonly string[][], maxChars: number): string[] {
  const lines: string[] = [];
  let used = -1; // no newline before the first line
  for (const [index, block] of blocks.entries()) {
    const size = block.reduce((sum, line) => sum + line.length + 1, 0);
    const left = blocks.length - index - 1;
    const note = left > 0 ? moreLine(left).length + 1 : 0;
    if (index > 0 && used + size + note > maxChars) {
      lines.push(moreLine(blocks.length - index));
      return lines;
    }
    lines.push(...block);
    used += size;
  }
  return lines;
}

function moreLine(count: number): string {
  return `(${count} more not shown)`;
}

function cliLine(node: SpawnTreeNode): string {
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

function chatLine(row: SubagentRow): string {
  const name = oneLine(row.label ?? (row.task || 'sub-agent'), CHAT_NAME_CHARS);
  const facts = [
    row.status,
    row.runtimeMs !== undefined ? duration(row.runtimeMs) : '',
    row.tokens ? `${compactCount(row.tokens.total)} tokens` : '',
  ].filter(Boolean);
  return [name, ...facts].join(' · ');
}

function groupBy<T>(
  items: readonly T[],
  keyOf: (item: T) => string | undefined,
): Map<string | undefined, T[]> {
  const groups = new Map<string | undefined, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return groups;
}
