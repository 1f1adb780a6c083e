import { defaultAgentId } from '../config/agent-config.js';
import type { ColloquyConfig, SessionVisibility } from '../config/index.js';
import type { SessionsListParams } from '../interfaces/gateway.js';
import type { SessionKind, SessionRecord } from '../interfaces/records.js';
import { SESSION_KINDS } from '../interfaces/records.js';
import { agentIdFromSessionKey, isReservedSessionKey } from '../keys/index.js';
import {
  checkSessionAccess,
  effectiveVisibility,
  type SessionAction,
  type SessionLineage,
} from '../policy/index.js';
import { mapWithConcurrency } from './concurrency.js';
import { listSpawnLevel } from './spawn-level.js';
import { lineageOf, type ToolScope } from './tool-context.js';

const MAX_TREE_SIZE = 2_000;

/**
 * Which sessions a listing or a search may even look at, as a store filter (the guard still
 * checks every row it returns): the requester's spawn tree (`tree`), the requester alone (`self`),
 * its agent (`agent`), or the agents agent-to-agent admits (`all`); under `agent` and `all`, plus
 * the requester's descendants of other agents, which the guard lets it read at every visibility
 * wider than `self`.
 */
export interface VisibleScope {
  visibility: SessionVisibility;
  /**
   * The requester and its descendants, key -> parent key: under `tree` and `self` the whole scope;
   * under `agent` and `all` where `filter` adds its descendants of other agents from, and their
   * ancestry for the guard. Absent when `filter` holds every session.
   */
  tree?: Map<string, string | undefined>;
  /** The store filter: exact keys, or agent ids plus the descendants of other agents, or nothing (any session). */
  filter: ScopeFilter;
  /**
   * The store filter of what `filtered.hidden` may count: the sessions the requester could see
   * under a wider visibility of its own, i.e. its own agent's and those of the agents
   * agent-to-agent admits together with it (spec section 11). Nothing else is ever counted.
   */
  countable: ScopeFilter;
}

/**
 * A store filter by exact keys and/or agent ids, widened by `alsoKeys` (see
 * `SessionListQuery.alsoKeys`); an absent field does not filter.
 */
export interface ScopeFilter {
  keys?: string[];
  agentIds?: string[];
  alsoKeys?: string[];
}

/** Works out the {@link VisibleScope} of the requester, walking its spawn tree when needed. */
export async function visibleScope(scope: ToolScope): Promise<VisibleScope> {
  const { config, sandboxed = false, agentId } = scope.options;
  const visibility = effectiveVisibility(config, sandboxed);
  const reachable = reachableAgents(config, agentId);
  const countable = reachable === 'any' ? {} : { agentIds: reachable };
  if (visibility === 'tree' || visibility === 'self') {
    const tree = await spawnTree(scope, visibility);
    return { visibility, tree, filter: { keys: [...tree.keys()] }, countable };
  }
  const agents = visibility === 'agent' ? [agentId] : countable.agentIds;
  if (agents === undefined) return { visibility, filter: {}, countable };
  // The guard lets the requester read what it spawned, recursively, whichever agent runs it
  // (spawned as another agent): a listing shows those sessions too.
  const tree = await spawnTree(scope, 'tree');
  const defaultAgent = defaultAgentId(config);
  const alsoKeys = [...tree.keys()].filter(
    (key) => !agents.includes(agentIdFromSessionKey(key) ?? defaultAgent),
  );
  const filter = { agentIds: agents, ...(alsoKeys.length > 0 ? { alsoKeys } : {}) };
  return { visibility, tree, filter, countable };
}

/**
 * The agents whose sessions a requester of `agentId` could ever see: its own, plus the others
 * `tools.agentToAgent` admits together with it (`'any'` when it admits every agent).
 */
function reachableAgents(config: ColloquyConfig, agentId: string): string[] | 'any' {
  const { enabled, allow } = config.tools.agentToAgent;
  const admitted = allow.map((a) => a.toLowerCase());
  if (!enabled || !(admitted.includes('*') || admitted.includes(agentId))) return [agentId];
  if (admitted.includes('*')) return 'any';
  return [...new Set([agentId, ...admitted])];
}

/** What a listing or a search matched in its page's scope, for {@link hiddenCount}. */
export interface ScopedMatches {
  /** How many sessions or messages matched in `VisibleScope.filter`. */
  total: number;
  /**
   * How many matches in the page's scope the guard refused, reserved keys left out: the refused
   * rows or hits of the page, and every match in {@link refusedForks}.
   */
  refused: number;
}

/** What {@link countWiderScope} counted. */
export interface WiderCounts {
  /** Matches in `VisibleScope.countable`. */
  countable: number;
  /** Matches in reserved sessions within `VisibleScope.countable`. */
  reservedCountable: number;
  /** Matches in reserved sessions within `VisibleScope.filter` (the page's scope). */
  reservedShown: number;
  /**
   * Matches in the page's scope that are countable too, when that scope reaches past the
   * countable one: a spawn tree may hold other agents' sessions, which the requester sees but
   * which are not counted. Absent when the page's scope lies within the countable one.
   */
  shownCountable?: number;
}

/**
 * Counts, beside a listing or a search, what it matches in the requester's wider scope
 * ({@link VisibleScope.countable}) and in the reserved sessions, for {@link hiddenCount}. Run it
 * alongside the page's own query.
 *
 * @param visible - the requester's scope
 * @param count - counts what the listing or search matches under an extra store filter
 * @param defaultAgent - the agent of keys without one (`cron:...`)
 */
export async function countWiderScope(
  visible: VisibleScope,
  count: (filter: ScopeFilter) => Promise<number>,
  defaultAgent: string,
): Promise<WiderCounts> {
  const reserved = { keys: [...RESERVED_KEYS] };
  const { alsoKeys, ...narrowed } = visible.filter;
  const byKeys = narrowed.keys !== undefined;
  const [countable, reservedCountable, reservedShown, shownCountable] = await Promise.all([
    count(visible.countable),
    count({ ...visible.countable, ...reserved }),
    // A page scoped by keys never holds a reserved session; one scoped like `countable` holds its.
    // Reserved sessions are nobody's descendants, so never among `alsoKeys`.
    byKeys || sameFilter(narrowed, visible.countable) ? undefined : count({ ...narrowed, ...reserved }),
    // A tree's keys may name other agents' sessions, and so may `alsoKeys` beside the agents of
    // `agent` and `all`, which lie within `countable`.
    byKeys
      ? count({ ...visible.countable, ...narrowed })
      : alsoKeys !== undefined
        ? count(withinCountable(narrowed, alsoKeys, visible.countable, defaultAgent))
        : undefined,
  ]);
  const shown = byKeys ? 0 : (reservedShown ?? reservedCountable);
  return {
    countable,
    reservedCountable,
    reservedShown: shown,
    ...(shownCountable !== undefined ? { shownCountable } : {}),
  };
}

/** An agent scope widened by the keys among `alsoKeys` of the countable agents. */
function withinCountable(
  agents: ScopeFilter,
  alsoKeys: readonly string[],
  countable: ScopeFilter,
  defaultAgent: string,
): ScopeFilter {
  const countableAgents = countable.agentIds;
  const kept = alsoKeys.filter(
    (key) =>
      countableAgents === undefined || countableAgents.includes(agentIdFromSessionKey(key) ?? defaultAgent),
  );
  return kept.length > 0 ? { ...agents, alsoKeys: kept } : agents;
}

/**
 * The forked sessions in the scope of a listing or a search under `agent` and `all` that the guard
 * refuses: a fork holds the history of the session it was forked from, and only callers that may
 * read that one see it (spec section 11). They are of agents the requester could see, so
 * `filtered.hidden` counts them, over the whole scope whichever page is shown (counted only where a
 * page met them, the number would change with the page). Under `tree` and `self` none is refused
 * (see {@link needsLineage}). The requester's descendants of other agents (`alsoKeys`) are left out:
 * what they inherited, the requester or its descendants wrote. The forks are listed through their
 * own index, so this costs a lineage walk per fork in the scope, never a walk of the scope.
 *
 * @param filter - the listing's or the search's own filters (kinds, activeness, archived ones)
 * @returns the keys of the refused forks
 */
export async function refusedForks(
  scope: ToolScope,
  visible: VisibleScope,
  filter: Pick<SessionsListParams, 'kinds' | 'activeMinutes' | 'includeArchived'>,
): Promise<string[]> {
  if (isTreeScoped(visible)) return [];
  const { alsoKeys: _descendants, ...agents } = visible.filter;
  const { sessions } = await scope.options.gateway.call('sessions.list', {
    ...filter,
    ...agents,
    onlyForked: true,
  });
  const lineages = await forkLineages(scope, visible, sessions);
  return sessions
    .filter((session) => !mayShow(scope, visible, session.key, 'list', lineages.get(session.key)))
    .filter((session) => !isReservedSessionKey(session.key))
    .map((session) => session.key);
}

/**
 * The `filtered.hidden` of a listing or a search: what matched among the sessions the requester
 * could see under a wider visibility of its own, less what it may see. Reserved sessions and the
 * sessions of agents it may never see are not counted, so the number reveals nothing about them:
 * not how many there are, how active they are, or what they hold (spec section 11).
 *
 * @param wider - from {@link countWiderScope}
 * @param shown - what matched in the page's scope, and how many of its matches the guard refused:
 *   those of the page, and those of the forks {@link refusedForks} found
 * @returns a count, never negative
 */
export function hiddenCount(wider: WiderCounts, shown: ScopedMatches): number {
  const seen = (wider.shownCountable ?? shown.total) - wider.reservedShown - shown.refused;
  return Math.max(0, wider.countable - wider.reservedCountable - seen);
}

const RESERVED_KEYS = ['global', 'unknown'] as const;

function sameFilter(a: ScopeFilter, b: ScopeFilter): boolean {
  return a.keys === b.keys && a.agentIds?.join('\u0000') === b.agentIds?.join('\u0000');
}

/**
 * The guard's verdict on one key found by a listing or a search: reserved keys are never shown,
 * and everything else goes through `checkSessionAccess` with the lineage known from the tree, or
 * the one given (a listing under `agent` or `all` reads it for forked sessions).
 */
export function mayShow(
  scope: ToolScope,
  visible: VisibleScope,
  key: string,
  action: SessionAction,
  lineage?: SessionLineage,
): boolean {
  if (isReservedSessionKey(key)) return false;
  const known = lineage ?? {
    ancestors: visible.tree ? ancestorsInTree(visible.tree, key) : [],
    inheritsFrom: 0,
  };
  return mayAccess(scope, key, known, action);
}

/** The guard's verdict for one key, given its lineage (ancestors as far as known, nearest first). */
export function mayAccess(
  scope: ToolScope,
  targetKey: string,
  lineage: SessionLineage,
  action: SessionAction,
): boolean {
  const { requesterKey, sandboxed = false, config } = scope.options;
  return checkSessionAccess({
    action,
    requesterKey,
    targetKey,
    targetAncestors: lineage.ancestors,
    targetInheritsFrom: lineage.inheritsFrom,
    sandboxed,
    config,
  }).allowed;
}

/**
 * The lineage of each session among `sessions` that the guard needs it for (see
 * {@link needsLineage}), read with at most 4 walks in flight.
 *
 * @returns lineages by session key; sessions without an entry need none
 */
export async function forkLineages(
  scope: ToolScope,
  visible: VisibleScope,
  sessions: readonly SessionRecord[],
): Promise<Map<string, SessionLineage>> {
  const lineages = new Map<string, SessionLineage>();
  const forked = sessions.filter((session) => needsLineage(visible, session));
  await mapWithConcurrency(forked, LINEAGE_CONCURRENCY, async (session) => {
    lineages.set(session.key, await lineageOf(scope, session));
  });
  return lineages;
}

const LINEAGE_CONCURRENCY = 4;

/**
 * Whether a listing must read the lineage of `session` before it asks the guard. Under `tree` and
 * `self` it need not: a session the requester sees there is the requester or one of its
 * descendants, so the sessions a fork copied history from are the requester or its descendants
 * too. Under `agent` and `all`, a forked session is checked against the sessions it inherited.
 */
export function needsLineage(visible: VisibleScope, session: Pick<SessionRecord, 'forked'>): boolean {
  return !isTreeScoped(visible) && session.forked === true;
}

/** True under `tree` and `self`, where the requester's spawn tree is the whole scope. */
export function isTreeScoped(visible: VisibleScope): boolean {
  return visible.visibility === 'tree' || visible.visibility === 'self';
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
    // One level per list; the tree is built in the frontier's order, as a walk one parent at a
    // time would build it.
    const { children } = await listSpawnLevel(scope.options.gateway, frontier, { includeArchived: true });
    const next: string[] = [];
    children.forEach((sessions, i) => {
      for (const child of sessions) {
        if (tree.has(child.key)) continue;
        tree.set(child.key, frontier[i]);
        next.push(child.key);
      }
    });
    frontier = next;
  }
  return tree;
}
