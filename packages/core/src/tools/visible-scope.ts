import type { SessionKind } from '../interfaces/records.js';
import { SESSION_KINDS } from '../interfaces/records.js';
import { isReservedSessionKey } from '../keys/index.js';
import { checkSessionAccess, effectiveVisibility, type SessionAction } from '../policy/index.js';
import type { ToolScope } from './tool-context.js';

const MAX_TREE_SIZE = 2_000;

/**
 * Which sessions a listing or a search may even look at, as a store filter (the guard still
 * checks every row it returns): the requester's spawn tree (`tree`), the requester alone (`self`),
 * its agent (`agent`), or the agents agent-to-agent admits (`all`).
 */
export interface VisibleScope {
  visibility: string;
  /** The requester and its descendants, key -> parent key (`tree` and `self` only). */
  tree?: Map<string, string | undefined>;
  /** The store filter: exact keys, or agent ids, or nothing (any session). */
  filter: { keys?: string[]; agentIds?: string[] };
}

/** Works out the {@link VisibleScope} of the requester, walking its spawn tree when needed. */
export async function visibleScope(scope: ToolScope): Promise<VisibleScope> {
  const { config, sandboxed = false } = scope.options;
  const visibility = effectiveVisibility(config, sandboxed);
  if (visibility === 'tree' || visibility === 'self') {
    const tree = await spawnTree(scope, visibility);
    return { visibility, tree, filter: { keys: [...tree.keys()] } };
  }
  if (visibility === 'agent') return { visibility, filter: { agentIds: [scope.options.agentId] } };
  return { visibility, filter: agentScopeForAll(scope) };
}

/**
 * The guard's verdict on one key found by a listing or a search: reserved keys are never shown,
 * and everything else goes through `checkSessionAccess` with the ancestors known from the tree.
 */
export function mayShow(
  scope: ToolScope,
  visible: VisibleScope,
  key: string,
  action: SessionAction,
): boolean {
  if (isReservedSessionKey(key)) return false;
  const ancestors = visible.tree ? ancestorsInTree(visible.tree, key) : [];
  return mayAccess(scope, key, ancestors, action);
}

/** The guard's verdict for one key (ancestors as far as known, nearest first). */
export function mayAccess(
  scope: ToolScope,
  targetKey: string,
  targetAncestors: readonly string[],
  action: SessionAction,
): boolean {
  const { requesterKey, sandboxed = false, config } = scope.options;
  return checkSessionAccess({ action, requesterKey, targetKey, targetAncestors, sandboxed, config }).allowed;
}

/** Why sessions were hidden, naming the settings that govern it. */
export function hiddenReason(visibility: string, sandboxed: boolean, what = 'other sessions'): string {
  const clamp = sandboxed
    ? ' (clamped for a sandboxed session by agents.defaults.sandbox.sessionToolsVisibility)'
    : '';
  return `tools.sessions.visibility is "${visibility}"${clamp}; ${what} exist but are not visible from here.`;
}

/** The known kinds among `raw` (case-insensitive); unknown ones are ignored. */
export function knownKinds(raw: readonly string[] | undefined): SessionKind[] {
  if (!raw) return [];
  const known = new Set<SessionKind>();
  for (const kind of raw) {
    const lower = kind.trim().toLowerCase();
    if ((SESSION_KINDS as readonly string[]).includes(lower)) known.add(lower as SessionKind);
  }
  return [...known];
}

/** The spawn chain of `key` within `tree`, nearest parent first. */
export function ancestorsInTree(tree: ReadonlyMap<string, string | undefined>, key: string): string[] {
  const chain: string[] = [];
  let parent = tree.get(key);
  while (parent !== undefined && !chain.includes(parent)) {
    chain.push(parent);
    parent = tree.get(parent);
  }
  return chain;
}

/**
 * The requester and its spawned descendants (`tree`), or just the requester (`self`), as a map of
 * key -> parent key.
 */
async function spawnTree(
  scope: ToolScope,
  visibility: 'tree' | 'self',
): Promise<Map<string, string | undefined>> {
  const tree = new Map<string, string | undefined>([[scope.options.requesterKey, undefined]]);
  if (visibility === 'self') return tree;
  let frontier = [scope.options.requesterKey];
  while (frontier.length > 0 && tree.size < MAX_TREE_SIZE) {
    const next: string[] = [];
    for (const parent of frontier) {
      const { sessions } = await scope.options.gateway.call('sessions.list', {
        spawnedBy: parent,
        includeArchived: true,
      });
      for (const child of sessions) {
        if (tree.has(child.key)) continue;
        tree.set(child.key, parent);
        next.push(child.key);
      }
    }
    frontier = next;
  }
  return tree;
}

function agentScopeForAll(scope: ToolScope): { agentIds?: string[] } {
  const { enabled, allow } = scope.options.config.tools.agentToAgent;
  if (!enabled) return { agentIds: [scope.options.agentId] };
  if (allow.includes('*')) return {};
  return { agentIds: [...new Set([scope.options.agentId, ...allow.map((a) => a.toLowerCase())])] };
}
