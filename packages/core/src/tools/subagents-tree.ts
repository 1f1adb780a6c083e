/**
 * The spawn tree below a session, read through the gateway: the sessions it spawned and theirs,
 * each with its latest run. Shared by `sessions_spawn` (active-children limit), `subagents` and the
 * runtime's `sessions.tree` method.
 */
import type { Gateway, RunSummary } from '../interfaces/gateway.js';
import type { RunStatus, SessionRecord } from '../interfaces/records.js';
import { listSpawnLevel } from './spawn-level.js';

/** Runs in these states count as active. */
export const ACTIVE_RUN_STATUSES: readonly RunStatus[] = ['queued', 'running'];

/** How many sessions of a tree the session tools read at most. */
export const MAX_TREE_NODES = 500;

/** One session below the root. */
export interface TreeNode {
  /** The sub-agent's session. */
  session: SessionRecord;
  /** Its latest run, if it ran (read unless `DescendantsOptions.latestRuns` is false). */
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

/** A child as a level of the walk reads it: its session and, when asked for, its latest run. */
type Child = Omit<TreeNode, 'depth' | 'ancestors'>;

/** Oldest spawn first; ties by key. */
const bySpawn = (a: Child, b: Child): number =>
  a.session.createdAt - b.session.createdAt || a.session.key.localeCompare(b.session.key);

/**
 * The direct children of each of `parentKeys` (one gateway call, see {@link listSpawnLevel}): entry
 * `i` holds those of `parentKeys[i]`, oldest spawn first. A parent with more than `maxNodes`
 * children gets the `maxNodes` the list puts first (the most recently active).
 */
async function childrenOfEach(
  gateway: Gateway,
  parentKeys: readonly string[],
  maxNodes: number,
  withLatestRun: boolean,
): Promise<Child[][]> {
  const level = await listSpawnLevel(gateway, parentKeys, withLatestRun ? { withLatestRun: true } : {});
  return level.children.map((sessions) =>
    sessions
      .slice(0, maxNodes)
      .map((session): Child => {
        const latestRun = level.latestRuns?.[session.key];
        return latestRun ? { session, latestRun } : { session };
      })
      .sort(bySpawn),
  );
}

/**
 * The direct children of a session, oldest spawn first.
 *
 * @param gateway - the gateway to read through
 * @param parentKey - the internal key of the parent
 * @param maxNodes - the most children returned (default {@link MAX_TREE_NODES})
 * @returns the children with their latest runs
 */
export async function childrenOf(
  gateway: Gateway,
  parentKey: string,
  maxNodes = MAX_TREE_NODES,
): Promise<Child[]> {
  const [children] = await childrenOfEach(gateway, [parentKey], maxNodes, true);
  return children!;
}

/** Options of {@link descendantsOf}. */
export interface DescendantsOptions {
  /** Read each node's latest run into `TreeNode.latestRun` (default true). */
  latestRuns?: boolean;
}

/**
 * Every session below `rootKey` (children, then theirs), breadth first, oldest spawn first within
 * a parent, at most `maxNodes`. Archived sessions are left out. Reads one level per gateway call
 * (`sessions.list` with the level's keys as `spawnedBy`), so a tree costs O(depth) calls.
 *
 * @param gateway - the gateway to read through
 * @param rootKey - the internal key of the root
 * @param maxNodes - the most nodes returned (default {@link MAX_TREE_NODES})
 * @param options - see {@link DescendantsOptions}
 * @returns the nodes in a stable order (what list indexes refer to)
 */
export async function descendantsOf(
  gateway: Gateway,
  rootKey: string,
  maxNodes = MAX_TREE_NODES,
  options: DescendantsOptions = {},
): Promise<TreeNode[]> {
  const withLatestRun = options.latestRuns ?? true;
  const nodes: TreeNode[] = [];
  const seen = new Set<string>([rootKey]);
  let frontier: { key: string; depth: number; ancestors: string[] }[] = [
    { key: rootKey, depth: 0, ancestors: [] },
  ];
  while (frontier.length > 0 && nodes.length < maxNodes) {
    const levels = await childrenOfEach(
      gateway,
      frontier.map((parent) => parent.key),
      maxNodes,
      withLatestRun,
    );
    const next: typeof frontier = [];
    frontier.forEach((parent, i) => {
      for (const child of levels[i]!) {
        if (seen.has(child.session.key) || nodes.length >= maxNodes) continue;
        seen.add(child.session.key);
        const node: TreeNode = {
          ...child,
          depth: parent.depth + 1,
          ancestors: [parent.key, ...parent.ancestors],
        };
        nodes.push(node);
        next.push({ key: node.session.key, depth: node.depth, ancestors: node.ancestors });
      }
    });
    frontier = next;
  }
  return nodes;
}
