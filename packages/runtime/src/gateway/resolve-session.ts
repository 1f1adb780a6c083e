import { type ColloquyConfig, ColloquyError, type SessionRecord } from '@colloquy/core';
import { defaultAgentId, type KeyContext, resolveSessionKeyAlias } from '@colloquy/core/internal';
import type { StoreOperations } from '@colloquy/core/store';

/**
 * The key context of an agent (default: the config's default agent).
 *
 * @param config - the resolved config
 * @param agentId - the requester's agent
 * @returns the context for alias resolution
 */
export function keyContextFor(config: ColloquyConfig, agentId?: string): KeyContext {
  return {
    agentId: agentId?.trim().toLowerCase() || defaultAgentId(config),
    mainKey: config.session.mainKey,
    scope: config.session.scope,
  };
}

/**
 * Finds a session by key in any spelling (aliases `main`/`global` resolved for `agentId`), else by
 * `sessionId`. Both lookups run every time, side by side, so a session that does not exist costs
 * what an existing one costs: the session tools answer a hidden target and a missing one alike, and
 * their timing must not tell them apart either (spec section 11).
 *
 * @param store - the store
 * @param config - the resolved config
 * @param raw - a key, alias or sessionId
 * @param agentId - the requester's agent (default: the default agent)
 * @returns the session
 * @throws `SESSION_NOT_FOUND` with a message that says how to find valid keys
 */
export async function requireSession(
  store: StoreOperations,
  config: ColloquyConfig,
  raw: string,
  agentId?: string,
): Promise<SessionRecord> {
  const key = resolveSessionKeyAlias(raw, keyContextFor(config, agentId));
  const [byKey, byId] = await Promise.all([
    store.getSession(key),
    store.listSessions({ sessionId: raw.trim(), includeArchived: true, limit: 1 }),
  ]);
  const session = byKey ?? byId[0];
  if (session) return session;
  throw new ColloquyError(
    'SESSION_NOT_FOUND',
    `No session "${raw}". Call sessions.list to see the session keys, or pass a key or sessionId from it.`,
    { key: raw },
  );
}

/**
 * Finds a session by exact label within an agent.
 *
 * @param store - the store
 * @param label - the label
 * @param agentId - limits the search to one agent when given
 * @returns the session
 * @throws `SESSION_NOT_FOUND` when no session has the label; `CONFLICT` when several do
 */
export async function requireSessionByLabel(
  store: StoreOperations,
  label: string,
  agentId?: string,
): Promise<SessionRecord> {
  const found = await store.listSessions({
    label,
    includeArchived: true,
    ...(agentId !== undefined ? { agentIds: [agentId] } : {}),
  });
  if (found.length === 1) return found[0]!;
  if (found.length === 0) {
    throw new ColloquyError(
      'SESSION_NOT_FOUND',
      `No session labelled "${label}"${agentId ? ` for agent "${agentId}"` : ''}. Call sessions.list to see labels, or set one with sessions.patch.`,
      { label, ...(agentId ? { agentId } : {}) },
    );
  }
  throw new ColloquyError(
    'CONFLICT',
    `${found.length} sessions are labelled "${label}". Pass agentId, or use the session key instead.`,
    { label, keys: found.map((s) => s.key) },
  );
}
