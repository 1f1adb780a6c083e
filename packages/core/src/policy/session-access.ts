/**
 * The one guard for session tools: may this session list, read, message, inspect, steer or kill
 * that one? Visibility (`tools.sessions.visibility`, clamped for sandboxed sessions), the
 * agent-to-agent gate, the self-loop rule and the children-only rule for steer/kill.
 */
import { defaultAgentId } from '../config/agent-config.js';
import type { ColloquyConfig, SessionVisibility } from '../config/schema.js';
import { type KeyContext, mainSessionKey, resolveSessionKeyAlias, toDisplayKey } from '../keys/key-alias.js';
import { formatSessionKey, type ParsedSessionKey, parseSessionKey } from '../keys/session-key.js';

/** What a session tool wants to do with a target session. */
export type SessionAction = 'list' | 'history' | 'send' | 'status' | 'steer' | 'kill';

/** The question put to `checkSessionAccess`. */
export interface SessionAccessInput {
  /** What the caller wants to do with the target. */
  action: SessionAction;
  /** The calling session's key (any spelling). */
  requesterKey: string;
  /** The target key (any spelling, or `main`). */
  targetKey: string;
  /** The target's `spawnedBy` chain, nearest parent first (empty for top-level sessions). */
  targetAncestors: readonly string[];
  /**
   * How many of `targetAncestors`, nearest first, the target's transcript holds history of: 1 when
   * the target was forked from its parent (`sessions_spawn` with `context: "fork"`), 2 when that
   * parent was itself forked from its own, and so on. Default 0. A session that holds another's
   * history is reachable only by callers that may read that other session too (spec section 11);
   * {@link readSessionLineage} works it out.
   */
  targetInheritsFrom?: number;
  /** True when the calling session runs sandboxed. */
  sandboxed: boolean;
  /** The resolved config (visibility, sandbox clamp, agent-to-agent rules). */
  config: ColloquyConfig;
}

/** The guard's verdict; a refusal carries one sentence naming the setting that decided. */
export type SessionAccessDecision = { allowed: true } | { allowed: false; reason: string };

const RANK: Record<SessionVisibility, number> = { self: 0, tree: 1, agent: 2, all: 3 };

/**
 * The visibility that applies to a caller: `tools.sessions.visibility`, clamped to `tree` for a
 * sandboxed caller while `agents.defaults.sandbox.sessionToolsVisibility` is `spawned` (the default).
 *
 * @param config - the resolved config
 * @param sandboxed - whether the caller runs sandboxed
 * @returns `self`, `tree`, `agent` or `all`
 *
 * @example
 * ```ts
 * const config = resolveConfig({ tools: { sessions: { visibility: 'all' } } });
 * effectiveVisibility(config, false); // 'all'
 * effectiveVisibility(config, true); // 'tree': a sandboxed session sees only its own tree
 * ```
 */
export function effectiveVisibility(config: ColloquyConfig, sandboxed: boolean): SessionVisibility {
  const configured = config.tools.sessions.visibility;
  if (sandboxed && config.agents.defaults.sandbox.sessionToolsVisibility === 'spawned') {
    return RANK[configured] > RANK.tree ? 'tree' : configured;
  }
  return configured;
}

/**
 * Decides one session-tool access. Both keys (and the ancestors) are normalised here, and `main`
 * resolved to the requester's agent main key, so no spelling of a key reaches a session the
 * guard would refuse under its normal form.
 *
 * Rules: reserved keys (`global`, `unknown`) are never accessible; `steer`/`kill` only reach the
 * requester's descendants (never itself), whatever the visibility; `send` to the requester's own
 * session is refused (a self-loop); otherwise visibility decides: `self` the requester only, `tree`
 * plus its descendants, `agent` plus every session of its agent, `all` plus other agents' sessions
 * when `tools.agentToAgent.enabled` and the target agent is in `tools.agentToAgent.allow` (or `"*"`).
 * Keys without an agent (`cron:`, `hook:`, `node-`) count as the default agent's. A target that
 * holds history forked from its ancestors (`targetInheritsFrom`) is reachable only when those
 * ancestors are readable too.
 *
 * A target refused by visibility, by the agent-to-agent gate or by the children-only rule gets
 * {@link unreachableTargetReason}, the same sentence a missing target gets: it never names the
 * target's key or agent (spec section 11).
 *
 * @param input - the action, both keys, the target's ancestry, the sandbox flag and the config
 * @returns `{ allowed: true }` or `{ allowed: false, reason }`
 *
 * @example
 * ```ts
 * const verdict = checkSessionAccess({ action: 'history', requesterKey, targetKey, targetAncestors, sandboxed, config });
 * if (!verdict.allowed) return { status: 'forbidden', error: verdict.reason };
 * ```
 */
export function checkSessionAccess(input: SessionAccessInput): SessionAccessDecision {
  const { action, config } = input;
  // Each key is parsed once; everything below works on the normalised internal forms.
  const requesterParsed = parseSessionKey(input.requesterKey);
  if (!requesterParsed.ok) {
    return refuse(
      `The calling session key "${String(input.requesterKey)}" is not a valid session key, so it can reach no session.`,
    );
  }
  const requesterAgent = agentOf(requesterParsed.key) ?? defaultAgentId(config);
  const ctx: KeyContext = {
    agentId: requesterAgent,
    mainKey: config.session.mainKey,
    scope: config.session.scope,
  };
  const requester = resolveParsed(requesterParsed.key, ctx);
  if (requester.reserved) {
    return refuse(`The calling session key "${requester.key}" is reserved, so it can reach no session.`);
  }

  const targetParsed = parseSessionKey(input.targetKey);
  if (!targetParsed.ok) return refuse(targetParsed.error.message);
  const target = resolveParsed(targetParsed.key, ctx);
  if (target.reserved) {
    return refuse(
      `"${target.key}" is a reserved key, not a session; use "main" for the main session or a key from sessions_list.`,
    );
  }
  const shown = () => toDisplayKey(target.key, ctx);
  const isSelf = target.key === requester.key;
  const isDescendant = () =>
    !isSelf && input.targetAncestors.some((a) => resolveSessionKeyAlias(a, ctx) === requester.key);

  if (action === 'steer' || action === 'kill') {
    if (isSelf) {
      return refuse(
        `A session cannot ${action} itself; subagents ${action} only works on sessions this session spawned.`,
      );
    }
    if (isDescendant()) return { allowed: true };
    return refuse(unreachableTargetReason(input));
  }
  if (action === 'send' && isSelf) {
    return refuse(
      `A session cannot send to itself ("${shown()}"): the message would loop back into this conversation. Reply directly, or send to another session.`,
    );
  }

  if (isSelf) return { allowed: true };
  const visibility = effectiveVisibility(config, input.sandboxed);
  const targetAgent = target.agentId ?? defaultAgentId(config);
  const sameAgent = targetAgent === requesterAgent;
  const visible =
    (sameAgent && RANK[visibility] >= RANK.agent) ||
    (RANK[visibility] >= RANK.tree && isDescendant()) ||
    (!sameAgent && visibility === 'all' && agentToAgentAdmits(config, requesterAgent, targetAgent));
  if (!visible || !mayReadInheritedHistory(input)) return refuse(unreachableTargetReason(input));
  return { allowed: true };
}

/**
 * A forked session holds its parent's recent history (and, when the parent was forked too, its
 * grandparent's): the caller must be allowed to read each of those sessions as well, or the fork
 * would be a way around the guard (spec section 11). Each source is checked as a `history` read
 * with its own ancestry, the rest of the target's chain.
 */
function mayReadInheritedHistory(input: SessionAccessInput): boolean {
  const sources = Math.min(input.targetInheritsFrom ?? 0, input.targetAncestors.length);
  for (let i = 0; i < sources; i++) {
    const verdict = checkSessionAccess({
      ...input,
      action: 'history',
      targetKey: input.targetAncestors[i]!,
      targetAncestors: input.targetAncestors.slice(i + 1),
      targetInheritsFrom: 0,
    });
    if (!verdict.allowed) return false;
  }
  return true;
}

/** The parts of {@link SessionAccessInput} that say who asks, not what they ask about. */
export type UnreachableTargetInput = Pick<
  SessionAccessInput,
  'action' | 'requesterKey' | 'sandboxed' | 'config'
>;

/**
 * The one answer for a target the caller may not reach *and* for a target that does not exist
 * (spec section 11): `forbidden` with this sentence, so a caller cannot probe which keys exist.
 * It depends only on the caller and the config, never on the target, so it cannot name a hidden
 * key, sessionId, label or agent; it names the setting that governs the refusal.
 *
 * @param input - the action, the requester key, the sandbox flag and the config
 * @returns one sentence, the same for every target the caller cannot reach
 */
export function unreachableTargetReason(input: UnreachableTargetInput): string {
  const { action, config } = input;
  const listHint = 'Use sessions_list to see the sessions you can reach.';
  if (action === 'steer' || action === 'kill') {
    return `That session is not a sub-agent of this session, or it does not exist: subagents ${action} only reaches sessions this session spawned (directly or through its children). Use subagents list to see them.`;
  }
  const head = 'That session is not visible from this session, or it does not exist';
  const visibility = effectiveVisibility(config, input.sandboxed);
  const configured = config.tools.sessions.visibility;
  if (visibility !== configured) {
    return `${head}: this session is sandboxed and agents.defaults.sandbox.sessionToolsVisibility is "spawned", which clamps tools.sessions.visibility ("${configured}") to "tree" (this session and the sessions it spawned). ${listHint} Set agents.defaults.sandbox.sessionToolsVisibility to "all" to lift the clamp.`;
  }
  if (visibility === 'all') {
    const a2a = config.tools.agentToAgent;
    const requesterAgent = requesterAgentOf(input.requesterKey, config);
    const gate = !a2a.enabled
      ? 'tools.agentToAgent.enabled is false'
      : requesterAgent !== undefined && !a2a.allow.includes('*') && !a2a.allow.includes(requesterAgent)
        ? `"${requesterAgent}" is not in tools.agentToAgent.allow`
        : 'tools.agentToAgent.allow must list the other agent too';
    return `${head}: tools.sessions.visibility is "all", and another agent's session is reachable only when tools.agentToAgent.enabled is true and tools.agentToAgent.allow lists both agents (or "*"); here ${gate}. ${listHint}`;
  }
  const scope =
    visibility === 'self'
      ? 'only this session'
      : visibility === 'tree'
        ? 'this session and the sessions it spawned'
        : "this agent's sessions";
  const widen =
    visibility === 'self'
      ? 'set tools.sessions.visibility to "tree", "agent" or "all"'
      : visibility === 'tree'
        ? 'set tools.sessions.visibility to "agent" (this agent\'s sessions) or "all"'
        : 'set tools.sessions.visibility to "all" and allow both agents in tools.agentToAgent';
  return `${head}: tools.sessions.visibility is "${visibility}" (${scope}). ${listHint} To reach more, ${widen}.`;
}

/**
 * True when `tools.agentToAgent` admits an access from one agent's session to another's: it is
 * enabled and its allow list names both agents (or `"*"`).
 *
 * @param config - the resolved config
 * @param requesterAgent - the agent of the session that asks
 * @param targetAgent - the agent of the session it reaches
 */
export function agentToAgentAdmits(
  config: ColloquyConfig,
  requesterAgent: string,
  targetAgent: string,
): boolean {
  const a2a = config.tools.agentToAgent;
  if (!a2a.enabled) return false;
  return [requesterAgent, targetAgent].every((agent) => a2a.allow.includes('*') || a2a.allow.includes(agent));
}

function requesterAgentOf(requesterKey: string, config: ColloquyConfig): string | undefined {
  const parsed = parseSessionKey(requesterKey);
  return parsed.ok ? (agentOf(parsed.key) ?? defaultAgentId(config)) : undefined;
}

interface ResolvedKey {
  /** The normalised internal key (aliases applied). */
  key: string;
  /** The agent the key names, if any (aliases of main name the context agent). */
  agentId: string | undefined;
  reserved: boolean;
}

function resolveParsed(parsed: ParsedSessionKey, ctx: KeyContext): ResolvedKey {
  if (parsed.type === 'alias') {
    if (parsed.alias === 'main' || (parsed.alias === 'global' && ctx.scope === 'global')) {
      return { key: mainSessionKey(ctx), agentId: ctx.agentId, reserved: false };
    }
    return { key: parsed.alias, agentId: undefined, reserved: true };
  }
  return { key: formatSessionKey(parsed), agentId: agentOf(parsed), reserved: false };
}

function agentOf(parsed: ParsedSessionKey): string | undefined {
  return 'agentId' in parsed ? parsed.agentId : undefined;
}

function refuse(reason: string): SessionAccessDecision {
  return { allowed: false, reason };
}
