import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { SessionVisibility } from '../config/index.js';
import { ColloquyError } from '../errors/colloquy-error.js';
import type { McpScope, McpTokenRecord } from '../interfaces/records.js';
import type { McpTokenListQuery, StoreOperations } from '../interfaces/store.js';

// Owner-issued bearer tokens of the MCP server: issuing, hashing, parsing scopes, and the store
// access that refuses clearly when a store does not keep tokens.

/** Every MCP scope, narrowest first. */
export const MCP_SCOPES: readonly McpScope[] = ['read', 'send', 'spawn'];

/** The prefix of every token, so a leaked one is recognisable (and a secret scanner can match it). */
export const MCP_TOKEN_PREFIX = 'colloquy_mcp_';

const VISIBILITY_ORDER: readonly SessionVisibility[] = ['self', 'tree', 'agent', 'all'];
const CLIENT_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** The token store calls, all present (see {@link mcpTokenStore}). */
export type McpTokenStore = Required<
  Pick<StoreOperations, 'putMcpToken' | 'getMcpTokenByHash' | 'listMcpTokens' | 'revokeMcpToken'>
>;

/** Options of {@link issueMcpToken}. */
export interface IssueMcpTokenOptions {
  /** The agent whose sessions the client works with. */
  agentId: string;
  /** The client's name (`[a-z0-9][a-z0-9_-]*`, at most 64 characters), e.g. `laptop`. */
  name: string;
  /** What the token may do. Default `['read']`. */
  scopes?: readonly McpScope[];
  /** How far the client sees. Default `tree`. */
  visibility?: SessionVisibility;
  /** The clock (default `Date.now`). */
  now?: () => number;
}

/** A freshly issued token: the secret to hand to the client once, and the record to store. */
export interface IssuedMcpToken {
  /** The bearer token. Shown once; only its hash is stored. */
  token: string;
  /** The record to store with `putMcpToken`. */
  record: McpTokenRecord;
}

/**
 * Issues an MCP access token: 32 random bytes (256 bits), so a plain SHA-256 is a safe thing to
 * store. A slow password hash exists to stretch guessable secrets; a token nobody chose cannot be
 * guessed, and a fast hash keeps the check of every request cheap.
 *
 * @param options - agent, client name, scopes and visibility
 * @returns the token and the record to store
 * @throws `INVALID_ARGUMENT` for a bad name, agent id or scope
 * @example
 * ```ts
 * const { token, record } = issueMcpToken({ agentId: 'main', name: 'laptop', scopes: ['read', 'send'] });
 * await mcpTokenStore(store).putMcpToken(record);
 * ```
 */
export function issueMcpToken(options: IssueMcpTokenOptions): IssuedMcpToken {
  const name = options.name.trim();
  if (!CLIENT_NAME.test(name)) {
    throw new ColloquyError(
      'INVALID_ARGUMENT',
      `"${options.name}" is not a client name: use lower-case letters, digits, "-" and "_" (at most 64, starting with a letter or digit).`,
      { name: options.name },
    );
  }
  const agentId = options.agentId.trim().toLowerCase();
  if (agentId === '' || agentId.includes(':')) {
    throw new ColloquyError('INVALID_ARGUMENT', `"${options.agentId}" is not an agent id.`, {
      agentId: options.agentId,
    });
  }
  const scopes = normalizeScopes(options.scopes ?? ['read']);
  const token = `${MCP_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
  return {
    token,
    record: {
      id: randomUUID(),
      name,
      agentId,
      hash: hashMcpToken(token),
      scopes,
      visibility: options.visibility ?? 'tree',
      createdAt: (options.now ?? Date.now)(),
    },
  };
}

/**
 * The stored form of a token: its hex SHA-256.
 *
 * @param token - the bearer token as the client sends it
 * @returns 64 hex characters
 */
export function hashMcpToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/**
 * Parses a comma-separated scope list (`read,send,spawn`).
 *
 * @param text - the list as typed
 * @returns the scopes, each once, in the order of {@link MCP_SCOPES}
 * @throws `INVALID_ARGUMENT` naming an unknown scope
 */
export function parseMcpScopes(text: string): McpScope[] {
  return normalizeScopes(
    text
      .split(',')
      .map((part) => part.trim().toLowerCase())
      .filter((part) => part !== ''),
  );
}

function normalizeScopes(scopes: readonly string[]): McpScope[] {
  for (const scope of scopes) {
    if (!(MCP_SCOPES as readonly string[]).includes(scope)) {
      throw new ColloquyError(
        'INVALID_ARGUMENT',
        `Unknown MCP scope "${scope}": use ${MCP_SCOPES.join(', ')} (comma-separated).`,
        { scope },
      );
    }
  }
  if (scopes.length === 0) {
    throw new ColloquyError('INVALID_ARGUMENT', `Give at least one MCP scope: ${MCP_SCOPES.join(', ')}.`);
  }
  return MCP_SCOPES.filter((scope) => scopes.includes(scope));
}

/**
 * The visibility an MCP client works with: its token's, clamped to `tools.sessions.visibility`, so
 * a token never sees wider than the agent's own tools do.
 *
 * @param token - the token's visibility
 * @param configured - `tools.sessions.visibility`
 * @returns the narrower of the two
 */
export function effectiveMcpVisibility(
  token: SessionVisibility,
  configured: SessionVisibility,
): SessionVisibility {
  return VISIBILITY_ORDER.indexOf(token) <= VISIBILITY_ORDER.indexOf(configured) ? token : configured;
}

/**
 * The session key an MCP client acts as: `agent:<agentId>:mcp:<name>`.
 *
 * @param agentId - the token's agent
 * @param name - the token's client name
 * @returns the internal key
 */
export function mcpClientSessionKey(agentId: string, name: string): string {
  return `agent:${agentId}:mcp:${name}`;
}

/**
 * True when `key` is an MCP client's session (`agent:<agentId>:mcp:<name>`): no model runs in it;
 * what reaches its inbox waits for the client's `events_wait`.
 *
 * @param key - an internal session key
 */
export function isMcpClientSessionKey(key: string): boolean {
  const parts = key.split(':');
  return parts.length === 4 && parts[0] === 'agent' && parts[2] === 'mcp' && CLIENT_NAME.test(parts[3]!);
}

/**
 * The token calls of `store`, or a clear refusal when the store does not keep MCP tokens (a
 * third-party store written before they existed).
 *
 * @param store - any Store or transaction handle
 * @returns the four token calls, bound to `store`
 * @throws `NOT_SUPPORTED` naming the missing calls
 */
export function mcpTokenStore(store: StoreOperations): McpTokenStore {
  const { putMcpToken, getMcpTokenByHash, listMcpTokens, revokeMcpToken } = store;
  if (!putMcpToken || !getMcpTokenByHash || !listMcpTokens || !revokeMcpToken) {
    const missing = ['putMcpToken', 'getMcpTokenByHash', 'listMcpTokens', 'revokeMcpToken'].filter(
      (name) => typeof (store as unknown as Record<string, unknown>)[name] !== 'function',
    );
    throw new ColloquyError(
      'NOT_SUPPORTED',
      `This store does not keep MCP tokens (missing ${missing.join(', ')}), so the MCP server cannot authenticate anyone. Use MemoryStore, SqliteStore or PostgresStore, or add these calls to your store (the conformance suite in @colloquy/testkit checks them).`,
      { missing },
    );
  }
  return {
    putMcpToken: putMcpToken.bind(store),
    getMcpTokenByHash: getMcpTokenByHash.bind(store),
    listMcpTokens: (query?: McpTokenListQuery) => listMcpTokens.call(store, query),
    revokeMcpToken: revokeMcpToken.bind(store),
  };
}
