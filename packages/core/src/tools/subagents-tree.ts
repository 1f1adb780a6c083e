/**
 * The spawn tree below a session, read through the gateway: the sessions it spawned and theirs,
 * each with its latest run. Shared by `sessions_spawn` (active-children limit) and `subagents`.
 */
import type { RunSummary } from '../interfaces/gateway.js';
import type { RunStatus, SessionRecord } from '../interfaces/records.js';
import type { ToolScope } from './tool-context.js';

/** Runs in these states count as active. */
export const ACTIVE_RUN_STATUSES: readonly RunStatus[] = ['queued', 'running'];

/** How many sessions of a tree are read at most. */
export const MAX_TREE_NODES = 500;

/** One session below the root. */
export interface TreeNode {
  /** The sub-agent's session. */
  session: SessionRecord;
  /** Its latest run, if it ran. */
  latestRun?: RunSummary;
  /** 1 for a direct child of the root. */
  depth: number;
  /** The keys above it, nearest first, ending with the root. */
  ancestors: string[];
}

/**
 * True when a node's latest run is queued or running.
 *
 * @param node - a tree node
 * @returns whether the sub-agent is active
 */
export function isActive(node: Pick<TreeNode, 'latestRun'>): boolean {
  return node.latestRun !== undefined && ACTIVE_RUN_STATUSES.includes(node.latestRun.status);
}

/**
 * The direct children of a session, oldest spawn first.
 *
 * @param scope - the tool scope (gateway)
 * @param parentKey - the internal key of the parent
 * @returns the children with their latest runs
 */
export async function childrenOf(
  scope: ToolScope,
  parentKey: string,
): Promise<Omit<TreeNode, 'depth' | 'ancestors'>[]> {
  const result = await scope.options.gateway.call('sessions.list', {
    spawnedBy: parentKey,
    withLatestRun: true,
  });
  return result.sessions
    .slice(0, MAX_TREE_NODES)
    .map((session) => {
      const latestRun = result.latestRuns?.[session.key];
      return latestRun ? { session, latestRun } : { session };
    })
    .sort((a, b) => a.session.createdAt - b.session.createdAt || a.session.key.localeCompare(b.session.key));
}

/**
 * Every session below `rootKey` (children, then theirs), breadth first, oldest spawn first within
 * a parent, at most {@link MAX_TREE_NODES}. Archived sessions are left out.
 *
 * @param scope - the tool scope (gateway)
 * @param rootKey - the internal key of the root
 * @returns the nodes in a stable order (what list indexes refer to)
 */
export async function descendantsOf(scope: ToolScope, rootKey: string): Promise<TreeNode[]> {
  const nodes: TreeNode[] = [];
  const seen = new Set<string>([rootKey]);
  let frontier: { key: string; depth: number; ancestors: string[] }[] = [
    { key: rootKey, depth: 0, ancestors: [] },
  ];
  while (frontier.length > 0 && nodes.length < MAX_TREE_NODES) {
    const next: typeof frontier = [];
    for (const parent of frontier) {
      for (const child of await childrenOf(scope, parent.key)) {
        if (seen.has(child.session.key) || nodes.length >= MAX_TREE_NODES) continue;
        seen.add(child.session.key);
        const node: TreeNode = {
          ...child,
          depth: parent.depth + 1,
          ancestors: [parent.key, ...parent.ancestors],
        };
        nodes.push(node);
        next.push({ key: node.session.key, depth: node.depth, ancestors: node.ancestors });
      }
    }
    frontier = next;
  }
  return nodes;
}
