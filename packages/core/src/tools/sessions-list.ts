import { Type } from '@sinclair/typebox';
import { type SanitizedMessage, sanitizeHistory } from '../history/index.js';
import type { SessionsListParams as GatewayListParams } from '../interfaces/gateway.js';
import { SESSION_KINDS, type SessionKind, type SessionRecord } from '../interfaces/records.js';
import { type AgentTool, toolResult } from '../interfaces/tool.js';
import { deriveChannelField, isReservedSessionKey } from '../keys/index.js';
import { checkSessionAccess, effectiveVisibility } from '../policy/index.js';
import { mapWithConcurrency } from './concurrency.js';
import { configuredSecrets, displayKey, failure, gatewayFailure, type ToolScope } from './tool-context.js';
import { validateToolArgs } from './validate-args.js';

/** The most rows sessions_list returns, whatever `limit` asks for. */
export const SESSIONS_LIST_MAX_LIMIT = 200;
/** The most messages per row sessions_list includes. */
export const SESSIONS_LIST_MAX_MESSAGES = 20;
/** History fetches in flight at once for `messageLimit`. */
export const SESSIONS_LIST_HISTORY_CONCURRENCY = 4;

const MAX_TREE_SIZE = 2_000;

export const SessionsListParams = Type.Object(
  {
    kinds: Type.Optional(
      Type.Array(Type.String({ maxLength: 32 }), {
        maxItems: 16,
        description: 'Only these kinds: main, dm, group, cron, hook, node, subagent, other.',
      }),
    ),
    limit: Type.Optional(
      Type.Number({
        minimum: 1,
        description: `Most rows to return (default and maximum ${SESSIONS_LIST_MAX_LIMIT}).`,
      }),
    ),
    activeMinutes: Type.Optional(
      Type.Number({ minimum: 1, description: 'Only sessions active within this many minutes.' }),
    ),
    messageLimit: Type.Optional(
      Type.Number({
        minimum: 0,
        description: `Include the last N messages of each session (0 = none, at most ${SESSIONS_LIST_MAX_MESSAGES}).`,
      }),
    ),
  },
  { additionalProperties: false },
);

/** One row of sessions_list. */
export interface SessionListRow {
  key: string;
  kind: SessionKind;
  channel: string;
  label?: string;
  displayName?: string;
  deliveryContext?: SessionRecord['deliveryContext'];
  updatedAt: number;
  sessionId: string;
  model?: string;
  contextTokens?: number;
  totalTokens?: number;
  estimatedCostUsd?: number;
  status?: SessionRecord['status'];
  startedAt?: number;
  endedAt?: number;
  runtimeMs?: number;
  childSessions?: string[];
  thinkingLevel?: string;
  verboseLevel?: string;
  systemSent?: boolean;
  abortedLastRun?: boolean;
  sendPolicy?: SessionRecord['sendPolicy'];
  lastChannel?: string;
  lastTo?: string;
  lastAccountId?: string;
  transcriptPath?: string;
  messages?: SanitizedMessage[];
}

/** The result of sessions_list. `filtered` says how many sessions visibility hid, and why. */
export interface SessionsListResult {
  count: number;
  sessions: SessionListRow[];
  filtered?: { hidden: number; reason: string };
}

/** Creates the `sessions_list` tool for one requester. */
export function createSessionsListTool(scope: ToolScope): AgentTool<typeof SessionsListParams> {
  return {
    name: 'sessions_list',
    description:
      'List the sessions (conversations) you can see, newest first, with kind, channel, model, tokens and status. ' +
      'Optionally include each session’s last messages.',
    parameters: SessionsListParams,
    async execute(_toolCallId, rawArgs) {
      const args = validateToolArgs(
        'sessions_list',
        SessionsListParams,
        dropNonFinite(rawArgs, ['limit', 'activeMinutes', 'messageLimit']),
      );
      if (!args.ok) return failure('error', args.error);
      try {
        return toolResult(await listSessions(scope, args.value));
      } catch (error) {
        const f = gatewayFailure(error, 'Listing sessions failed.');
        return failure(f.status, f.error);
      }
    },
  };
}

async function listSessions(
  scope: ToolScope,
  args: { kinds?: string[]; limit?: number; activeMinutes?: number; messageLimit?: number },
): Promise<SessionsListResult> {
  const { gateway, config, sandboxed = false } = scope.options;
  const limit = clampInt(args.limit, SESSIONS_LIST_MAX_LIMIT, 1, SESSIONS_LIST_MAX_LIMIT);
  const messageLimit = clampInt(args.messageLimit, 0, 0, SESSIONS_LIST_MAX_MESSAGES);
  const activeMinutes = finiteFloor(args.activeMinutes);
  const kinds = knownKinds(args.kinds);
  const filter: GatewayListParams = {
    ...(kinds.length > 0 ? { kinds } : {}),
    ...(activeMinutes !== undefined ? { activeMinutes } : {}),
  };

  const visibility = effectiveVisibility(config, sandboxed);
  const tree =
    visibility === 'tree' || visibility === 'self' ? await spawnTree(scope, visibility) : undefined;
  const visibleScope: GatewayListParams =
    tree !== undefined
      ? { keys: [...tree.keys()] }
      : visibility === 'agent'
        ? { agentIds: [scope.options.agentId] }
        : agentScopeForAll(scope);

  const [visible, everything] = await Promise.all([
    gateway.call('sessions.list', { ...filter, ...visibleScope, limit }),
    gateway.call('sessions.list', { ...filter, limit: 1 }),
  ]);

  let refused = 0;
  const allowed = visible.sessions.filter((session) => {
    if (isReservedSessionKey(session.key)) {
      refused++;
      return false;
    }
    const allowed = mayList(scope, session.key, tree ? ancestorsInTree(tree, session.key) : []);
    if (!allowed) refused++;
    return allowed;
  });

  const children = tree ?? (await childrenOf(scope, allowed));
  const rows = allowed.map((session) => toRow(scope, session, children, visible.transcriptLocators));
  if (messageLimit > 0) {
    const secrets = configuredSecrets(config);
    await mapWithConcurrency(rows, SESSIONS_LIST_HISTORY_CONCURRENCY, async (row, i) => {
      const { messages } = await gateway.call('chat.history', { key: allowed[i]!.key, limit: messageLimit });
      row.messages = sanitizeHistory(messages, { includeTools: false, secrets }).messages;
    });
  }

  const hidden = Math.max(0, everything.total - visible.total) + refused;
  return {
    count: rows.length,
    sessions: rows,
    ...(hidden > 0 ? { filtered: { hidden, reason: hiddenReason(visibility, sandboxed) } } : {}),
  };
}

function toRow(
  scope: ToolScope,
  session: SessionRecord,
  children: ReadonlyMap<string, string | undefined> | Map<string, string[]>,
  locators: Record<string, string> | undefined,
): SessionListRow {
  const childKeys = childKeysOf(children, session.key).map((k) => displayKey(scope, k));
  const runtimeMs =
    session.startedAt !== undefined
      ? Math.max(0, (session.endedAt ?? scope.now()) - session.startedAt)
      : undefined;
  const row: SessionListRow = {
    key: displayKey(scope, session.key),
    kind: session.kind,
    channel: deriveChannelField(session),
    label: session.label,
    displayName: session.displayName,
    deliveryContext: session.deliveryContext,
    updatedAt: session.updatedAt,
    sessionId: session.sessionId,
    model: session.model,
    contextTokens: session.usage?.contextTokens,
    totalTokens: session.usage?.totalTokens,
    estimatedCostUsd: session.estimatedCostUsd,
    status: session.status,
    startedAt: session.startedAt,
    endedAt: session.endedAt,
    runtimeMs,
    childSessions: childKeys.length > 0 ? childKeys : undefined,
    thinkingLevel: session.thinkingLevel,
    verboseLevel: session.verboseLevel,
    systemSent: session.systemSent,
    abortedLastRun: session.abortedLastRun,
    sendPolicy: session.sendPolicy,
    lastChannel: session.lastChannel,
    lastTo: session.lastTo,
    lastAccountId: session.lastAccountId,
    transcriptPath: locators?.[session.key],
  };
  return withoutUndefined(row);
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

function ancestorsInTree(tree: ReadonlyMap<string, string | undefined>, key: string): string[] {
  const chain: string[] = [];
  let parent = tree.get(key);
  while (parent !== undefined && !chain.includes(parent)) {
    chain.push(parent);
    parent = tree.get(parent);
  }
  return chain;
}

async function childrenOf(
  scope: ToolScope,
  sessions: readonly SessionRecord[],
): Promise<Map<string, string[]>> {
  const result = new Map<string, string[]>();
  const parents = sessions.filter((s) => s.kind !== 'cron' && s.kind !== 'hook' && s.kind !== 'node');
  await mapWithConcurrency(parents, SESSIONS_LIST_HISTORY_CONCURRENCY, async (session) => {
    const { sessions: kids } = await scope.options.gateway.call('sessions.list', {
      spawnedBy: session.key,
      limit: 50,
    });
    // A visible session may have spawned under an agent the caller may not see: never name those.
    const shown = kids.map((k) => k.key).filter((key) => mayList(scope, key, [session.key]));
    if (shown.length > 0) result.set(session.key, shown);
  });
  return result;
}

/** The guard's `list` verdict for one key (ancestors as far as known, nearest first). */
function mayList(scope: ToolScope, targetKey: string, targetAncestors: readonly string[]): boolean {
  const { requesterKey, sandboxed = false, config } = scope.options;
  return checkSessionAccess({ action: 'list', requesterKey, targetKey, targetAncestors, sandboxed, config })
    .allowed;
}

function childKeysOf(
  children: ReadonlyMap<string, string | undefined> | Map<string, string[]>,
  key: string,
): string[] {
  const direct = children.get(key);
  if (Array.isArray(direct)) return direct;
  const keys: string[] = [];
  for (const [child, parent] of children as ReadonlyMap<string, string | undefined>) {
    if (parent === key) keys.push(child);
  }
  return keys;
}

function agentScopeForAll(scope: ToolScope): GatewayListParams {
  const { enabled, allow } = scope.options.config.tools.agentToAgent;
  if (!enabled) return { agentIds: [scope.options.agentId] };
  if (allow.includes('*')) return {};
  return { agentIds: [...new Set([scope.options.agentId, ...allow.map((a) => a.toLowerCase())])] };
}

function hiddenReason(visibility: string, sandboxed: boolean): string {
  const clamp = sandboxed
    ? ' (clamped for a sandboxed session by agents.defaults.sandbox.sessionToolsVisibility)'
    : '';
  return `tools.sessions.visibility is "${visibility}"${clamp}; other sessions exist but are not visible from here.`;
}

function knownKinds(raw: readonly string[] | undefined): SessionKind[] {
  if (!raw) return [];
  const known = new Set<SessionKind>();
  for (const kind of raw) {
    const lower = kind.trim().toLowerCase();
    if ((SESSION_KINDS as readonly string[]).includes(lower)) known.add(lower as SessionKind);
  }
  return [...known];
}

/** Removes numeric fields that are not finite (NaN, ±Infinity): the spec says they are ignored. */
export function dropNonFinite(args: unknown, fields: readonly string[]): unknown {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return args;
  const copy: Record<string, unknown> = { ...args };
  for (const field of fields) {
    const value = copy[field];
    if (typeof value === 'number' && !Number.isFinite(value)) delete copy[field];
  }
  return copy;
}

/** Floors a number, ignoring non-finite values; returns undefined when absent or non-finite. */
export function finiteFloor(value: number | undefined): number | undefined {
  return value !== undefined && Number.isFinite(value) ? Math.floor(value) : undefined;
}

/** Floors and clamps to [min, max], falling back to `fallback` when absent or non-finite. */
export function clampInt(value: number | undefined, fallback: number, min: number, max: number): number {
  const floored = finiteFloor(value);
  return floored === undefined ? fallback : Math.min(max, Math.max(min, floored));
}

function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
