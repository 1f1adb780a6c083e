import type { ColloquyConfig } from '../config/index.js';
import { isColloquyError } from '../errors/colloquy-error.js';
import type { Gateway } from '../interfaces/gateway.js';
import type { SessionRecord } from '../interfaces/records.js';
import { type ToolResult, toolResult } from '../interfaces/tool.js';
import {
  isReservedSessionKey,
  type KeyContext,
  normalizeSessionKey,
  resolveSessionKeyAlias,
  toDisplayKey,
} from '../keys/index.js';
import {
  checkSessionAccess,
  readSessionLineage,
  type SessionAction,
  type SessionLineage,
  unreachableTargetReason,
} from '../policy/index.js';

/** Options of {@link createSessionTools}: who is calling, under which config, through which gateway. */
export interface SessionToolsOptions {
  /** The requester's internal session key (e.g. `agent:main:main`). */
  requesterKey: string;
  /** The requester's agent id. */
  agentId: string;
  /** True when the requester runs sandboxed (clamps visibility). Default false. */
  sandboxed?: boolean;
  /** The resolved configuration (visibility, send policy, agent-to-agent rules, limits). */
  config: ColloquyConfig;
  /** The gateway the tools call. */
  gateway: Gateway;
  /** Inter-session hops that led to the current run (0 for a human's message). Default 0. */
  hop?: number;
  /** The clock (default `Date.now`). */
  now?: () => number;
  /**
   * Receives background work the tools start (the agent-to-agent reply-back and announce steps),
   * so the host can wait for it on shutdown. Default: run detached, errors ignored.
   */
  track?: (work: Promise<void>) => void;
}

/** A tool-level refusal or mistake, as the model sees it. */
export interface ToolFailure {
  /** `forbidden` when policy refused; `error` for a mistake or a failure. */
  status: 'error' | 'forbidden';
  /** A sentence the model can act on. */
  error: string;
}

/** The resolved context every session tool works in. */
export interface ToolScope {
  options: SessionToolsOptions;
  keyContext: KeyContext;
  now: () => number;
}

/** Builds the shared scope from the factory options. */
export function createToolScope(options: SessionToolsOptions): ToolScope {
  return {
    options,
    keyContext: {
      agentId: options.agentId,
      mainKey: options.config.session.mainKey,
      scope: options.config.session.scope,
    },
    now: options.now ?? Date.now,
  };
}

/** A `{ status: "error" | "forbidden", error }` tool result. */
export function failure(status: ToolFailure['status'], error: string): ToolResult<ToolFailure> {
  return toolResult({ status, error }, true);
}

/** The display form of a key for this requester (`main` for its own main session). */
export function displayKey(scope: ToolScope, key: string): string {
  return toDisplayKey(key, scope.keyContext);
}

/** A target found and allowed, or the failure to return. */
export type TargetLookup = { ok: true; session: SessionRecord } | { ok: false; failure: ToolFailure };

/**
 * Resolves a key (any spelling, the `main` alias, or a sessionId) to a session, then asks the one
 * guard whether `action` is allowed on it. Refusals come back as values; a target that does not
 * exist gets the very answer a hidden one gets (see {@link unreachable}).
 */
export async function findAllowedTarget(
  scope: ToolScope,
  raw: string,
  action: SessionAction,
): Promise<TargetLookup> {
  const found = await resolveByKeyOrId(scope, raw, action);
  if (!found.ok) return found;
  return authorize(scope, found.session, action);
}

/**
 * Resolves `{ label, agentId? }` to a session, then applies the guard. A label no session carries,
 * or only sessions the caller may not see, gets the answer a hidden target gets; several sessions
 * with the label are an error only when more than one of them is visible.
 */
export async function findAllowedTargetByLabel(
  scope: ToolScope,
  label: string,
  agentId: string | undefined,
  action: SessionAction,
): Promise<TargetLookup> {
  const owner = agentId?.trim().toLowerCase() || scope.options.agentId;
  const gateway = scope.options.gateway;
  try {
    const { session } = await gateway.call('sessions.resolve', { label: label.trim(), agentId: owner });
    return authorize(scope, session, action);
  } catch (error) {
    if (isNotFound(error)) return unreachable(scope, action);
    if (!isColloquyError(error) || error.code !== 'CONFLICT') {
      return { ok: false, failure: gatewayFailure(error, 'The gateway could not resolve the label.') };
    }
    return pickVisible(scope, label.trim(), conflictKeys(error.details), action);
  }
}

/** Of the sessions that share a label, the one the caller may reach; hidden ones are never named or counted. */
async function pickVisible(
  scope: ToolScope,
  label: string,
  keys: readonly string[],
  action: SessionAction,
): Promise<TargetLookup> {
  const allowed: SessionRecord[] = [];
  for (const key of keys) {
    try {
      const { session } = await scope.options.gateway.call('sessions.resolve', { key });
      if ((await authorize(scope, session, action)).ok) allowed.push(session);
    } catch {
      // Gone since the conflict: nothing to pick.
    }
  }
  if (allowed.length === 1) return { ok: true, session: allowed[0]! };
  if (allowed.length === 0) return unreachable(scope, action);
  return {
    ok: false,
    failure: {
      status: 'error',
      error: `${allowed.length} sessions you can see are labelled "${label}": pass sessionKey (a key from sessions_list) instead.`,
    },
  };
}

function conflictKeys(details: Record<string, unknown>): string[] {
  const keys = details.keys;
  return Array.isArray(keys) ? keys.filter((k): k is string => typeof k === 'string') : [];
}

/**
 * One `sessions.resolve` call for a key or a sessionId: the gateway looks both up every time, so a
 * target that does not exist costs what a hidden one costs and timing cannot tell them apart.
 */
async function resolveByKeyOrId(scope: ToolScope, raw: string, action: SessionAction): Promise<TargetLookup> {
  const trimmed = raw.trim();
  if (trimmed === '') {
    return {
      ok: false,
      failure: { status: 'error', error: 'The sessionKey is empty; pass a key from sessions_list.' },
    };
  }
  if (isReservedSessionKey(resolveSessionKeyAlias(normalizeSessionKey(trimmed), scope.keyContext))) {
    return {
      ok: false,
      failure: { status: 'error', error: `"${trimmed}" is a reserved key, not a session.` },
    };
  }
  try {
    const { session } = await scope.options.gateway.call('sessions.resolve', {
      key: trimmed,
      agentId: scope.options.agentId,
    });
    return { ok: true, session };
  } catch (error) {
    if (isNotFound(error)) return unreachable(scope, action);
    return { ok: false, failure: gatewayFailure(error, 'The gateway could not resolve the session.') };
  }
}

function isNotFound(error: unknown): boolean {
  return isColloquyError(error) && error.code === 'SESSION_NOT_FOUND';
}

/**
 * The answer for a target that does not exist, word for word the guard's answer for one the caller
 * may not see (spec section 11), so the tools cannot be used to probe which keys exist.
 */
function unreachable(scope: ToolScope, action: SessionAction): TargetLookup {
  const { requesterKey, sandboxed = false, config } = scope.options;
  return {
    ok: false,
    failure: {
      status: 'forbidden',
      error: unreachableTargetReason({ action, requesterKey, sandboxed, config }),
    },
  };
}

async function authorize(
  scope: ToolScope,
  session: SessionRecord,
  action: SessionAction,
): Promise<TargetLookup> {
  const lineage = await lineageOf(scope, session);
  const decision = checkSessionAccess({
    action,
    requesterKey: scope.options.requesterKey,
    targetKey: session.key,
    targetAncestors: lineage.ancestors,
    targetInheritsFrom: lineage.inheritsFrom,
    sandboxed: scope.options.sandboxed ?? false,
    config: scope.options.config,
  });
  if (!decision.allowed) return { ok: false, failure: { status: 'forbidden', error: decision.reason } };
  return { ok: true, session };
}

/** The spawn chain above `session` and how much of it the session holds forked history of. */
export function lineageOf(scope: ToolScope, session: SessionRecord): Promise<SessionLineage> {
  return readSessionLineage(session, async (key) => {
    try {
      return (await scope.options.gateway.call('sessions.resolve', { key })).session;
    } catch {
      return undefined;
    }
  });
}

/** Error codes whose messages describe the operator's storage (hosts, ports, files), not the model's call. */
const STORAGE_CODES: ReadonlySet<string> = new Set([
  'STORE_ERROR',
  'STORE_CORRUPT',
  'STORE_VERSION',
  'STORE_LOCKED',
]);

/**
 * Turns a gateway rejection into a tool failure with a readable sentence. A storage failure is
 * told to the model without its message, which names the operator's database or files; the
 * gateway's own log keeps the details.
 */
export function gatewayFailure(error: unknown, fallback: string): ToolFailure {
  if (isColloquyError(error) && STORAGE_CODES.has(error.code)) {
    return {
      status: 'error',
      error: `${fallback} The session store failed to answer (${error.code}); try again later.`,
    };
  }
  if (isColloquyError(error)) {
    return {
      status: error.code === 'FORBIDDEN' || error.code === 'SEND_DENIED' ? 'forbidden' : 'error',
      error: error.message,
    };
  }
  return { status: 'error', error: error instanceof Error ? `${fallback} ${error.message}` : fallback };
}

/**
 * Every configured secret value that must never reach history output: `redaction.secrets`, model
 * provider API keys, the gateway token, and token/secret/password/apiKey strings under `channels`.
 */
export function configuredSecrets(config: ColloquyConfig): string[] {
  const secrets = new Set<string>(config.redaction.secrets);
  for (const provider of Object.values(config.models.providers)) {
    if (provider.apiKey) secrets.add(provider.apiKey);
  }
  if (config.gateway.token) secrets.add(config.gateway.token);
  collectNamedSecrets(config.channels, secrets, 0);
  return [...secrets].filter((s) => s.length >= 4);
}

const SECRET_FIELD = /(token|secret|password|apikey|api_key)$/i;

function collectNamedSecrets(value: unknown, into: Set<string>, depth: number): void {
  if (depth > 8 || typeof value !== 'object' || value === null) return;
  for (const [field, inner] of Object.entries(value)) {
    if (typeof inner === 'string' && SECRET_FIELD.test(field)) into.add(inner);
    else collectNamedSecrets(inner, into, depth + 1);
  }
}
