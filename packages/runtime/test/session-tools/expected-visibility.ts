/**
 * Who may see which session, stated from spec sections 9 and 11 independently of the guard: the
 * suites compare the tools' answers with these functions, never with `checkSessionAccess`.
 */

/** The visibility settings of spec section 9. */
export type Visibility = 'self' | 'tree' | 'agent' | 'all';

/** What a caller does with a session (the actions of the tools that name one). */
export type Access = 'list' | 'history' | 'status' | 'send';

/** The settings one tool call is made under. */
export interface AccessSettings {
  /** `tools.sessions.visibility`. */
  visibility: Visibility;
  /** Whether the calling session runs sandboxed. */
  sandboxed: boolean;
  /** `agents.defaults.sandbox.sessionToolsVisibility`: `spawned` clamps a sandboxed caller to `tree`. */
  sandboxClamp: 'spawned' | 'all';
  /** `tools.agentToAgent`. */
  agentToAgent: { enabled: boolean; allow: readonly string[] };
  /** The agent that keys without one (`cron:...`) belong to. */
  defaultAgent: string;
}

/** What the model needs to know of an existing session: who spawned it, and whether it was forked. */
export interface SessionFacts {
  spawnedBy?: string;
  /** True when it holds history copied from `spawnedBy` (`sessions_spawn` with `context: "fork"`). */
  forked?: boolean;
}

/** The facts of an existing session, or `undefined` when no session has that key. */
export type SessionLookup = (key: string) => SessionFacts | undefined;

const RESERVED = new Set(['global', 'unknown']);

/** True for `global` and `unknown`, which are never shown nor reachable. */
export function isReservedKey(key: string): boolean {
  return RESERVED.has(key);
}

/** The agent that owns a key: `agent:<id>:...`, else the default agent. */
export function agentOfKey(key: string, defaultAgent: string): string {
  return /^agent:([^:]+):/.exec(key)?.[1] ?? defaultAgent;
}

/** The visibility that applies: a sandboxed caller is clamped to `tree` while the clamp is `spawned`. */
export function effectiveVisibility(settings: AccessSettings): Visibility {
  const wide = settings.visibility === 'agent' || settings.visibility === 'all';
  return settings.sandboxed && settings.sandboxClamp === 'spawned' && wide ? 'tree' : settings.visibility;
}

/** True when `tools.agentToAgent` is on and admits both agents (spec section 11). */
export function agentToAgentAdmits(settings: AccessSettings, a: string, b: string): boolean {
  const { enabled, allow } = settings.agentToAgent;
  return enabled && [a, b].every((agent) => allow.includes('*') || allow.includes(agent));
}

/**
 * True when `target` sits below `requester` in a chain of sessions spawning each other. A deleted
 * session breaks the chain: what it spawned is no longer anyone's descendant through it.
 */
export function isDescendant(requester: string, target: string, lookup: SessionLookup): boolean {
  const seen = new Set<string>([target]);
  let parent = lookup(target)?.spawnedBy;
  while (parent !== undefined && !seen.has(parent)) {
    if (parent === requester) return true;
    seen.add(parent);
    parent = lookup(parent)?.spawnedBy;
  }
  return false;
}

/**
 * Whether `requester` may do `access` on `target` (spec sections 9 and 11):
 * - reserved keys never; the caller's own session always, except sending to itself;
 * - `self`: nothing else; `tree`: plus what it spawned, recursively; `agent`: plus every session of
 *   its agent; `all`: plus other agents' sessions where agent-to-agent admits both agents;
 * - a forked session only when the caller may also read the session it was forked from.
 */
export function expectedAccess(
  settings: AccessSettings,
  requester: string,
  target: string,
  access: Access,
  lookup: SessionLookup,
): boolean {
  if (isReservedKey(target)) return false;
  if (target === requester) return access !== 'send';
  const visibility = effectiveVisibility(settings);
  const requesterAgent = agentOfKey(requester, settings.defaultAgent);
  const targetAgent = agentOfKey(target, settings.defaultAgent);
  const sameAgent = requesterAgent === targetAgent;
  const inScope =
    (sameAgent && (visibility === 'agent' || visibility === 'all')) ||
    (visibility !== 'self' && isDescendant(requester, target, lookup)) ||
    (!sameAgent && visibility === 'all' && agentToAgentAdmits(settings, requesterAgent, targetAgent));
  if (!inScope) return false;
  const facts = lookup(target);
  if (facts?.forked && facts.spawnedBy !== undefined) {
    return expectedAccess(settings, requester, facts.spawnedBy, 'history', lookup);
  }
  return true;
}

/**
 * Whether `filtered.hidden` may count `target` when the caller cannot see it: only sessions the
 * caller could see under a wider visibility of its own, i.e. its own agent's and those of agents
 * agent-to-agent admits together with its own; never reserved ones (spec section 11).
 */
export function expectedCountable(settings: AccessSettings, requester: string, target: string): boolean {
  if (isReservedKey(target)) return false;
  const requesterAgent = agentOfKey(requester, settings.defaultAgent);
  const targetAgent = agentOfKey(target, settings.defaultAgent);
  return requesterAgent === targetAgent || agentToAgentAdmits(settings, requesterAgent, targetAgent);
}

// --- the fixed matrix of the visibility suites ---

/** Where a target session sits relative to the requester `agent:main:main`. */
export type Target = 'self' | 'child' | 'sameAgent' | 'otherAllowed' | 'otherDenied';

const MATRIX: Record<Target, string> = {
  self: 'agent:main:main',
  child: 'agent:main:subagent:child',
  sameAgent: 'agent:main:telegram:group:team',
  otherAllowed: 'agent:ops:main',
  otherDenied: 'agent:sec:main',
};

const matrixLookup: SessionLookup = (key) => (key === MATRIX.child ? { spawnedBy: MATRIX.self } : {});

/** The matrix's settings: agent-to-agent enabled for `main` and `ops`, the sandbox clamp on. */
function matrixSettings(visibility: Visibility, sandboxed: boolean): AccessSettings {
  return {
    visibility,
    sandboxed,
    sandboxClamp: 'spawned',
    agentToAgent: { enabled: true, allow: ['main', 'ops'] },
    defaultAgent: 'main',
  };
}

/** Whether `agent:main:main` may see a target of the matrix (see {@link expectedAccess}). */
export function expectedVisible(visibility: Visibility, sandboxed: boolean, target: Target): boolean {
  return expectedAccess(
    matrixSettings(visibility, sandboxed),
    MATRIX.self,
    MATRIX[target],
    'list',
    matrixLookup,
  );
}

/** Whether `filtered.hidden` may count a target of the matrix when hidden (see {@link expectedCountable}). */
export function expectedCountableTarget(target: Target): boolean {
  return expectedCountable(matrixSettings('self', false), MATRIX.self, MATRIX[target]);
}
