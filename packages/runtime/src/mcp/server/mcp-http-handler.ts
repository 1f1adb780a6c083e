import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type ColloquyConfig,
  type Gateway,
  type Logger,
  type SessionVisibility,
  silentLogger,
} from '@colloquy/core';
import type { McpScope, McpTokenStore } from '@colloquy/core/gateway';
import { hashMcpToken } from '@colloquy/core/internal';
import { hostHeaderValidation, originValidation, toNodeHandler } from '@modelcontextprotocol/node';
import {
  type AuthInfo,
  createMcpHandler,
  OAuthError,
  OAuthErrorCode,
  requireBearerAuth,
} from '@modelcontextprotocol/server';
import { createMcpToolServer } from './create-mcp-tool-server.js';
import type { McpClientIdentity } from './mcp-client-identity.js';

/** Options of {@link createMcpHttpHandler}. */
export interface McpHttpHandlerOptions {
  /** The gateway the tools call. */
  gateway: Gateway;
  /** The resolved config (`gateway.mcp` for the allowed hosts and origins). */
  config: ColloquyConfig;
  /** Where tokens are looked up (see `mcpTokenStore` in `@colloquy/core`). */
  tokens: Pick<McpTokenStore, 'getMcpTokenByHash'>;
  /** The version the server reports to clients. Default: the runtime's own version. */
  version?: string;
  /** Receives background work the tools start, for shutdown. */
  track?: (work: Promise<void>) => void;
  /** Receives refused requests and handler errors. Default: silent. */
  logger?: Logger;
}

/** The MCP endpoint as a Node request handler (what the gateway server mounts at `/mcp`). */
export interface McpHttpHandler {
  /** Answers one request: `403` for a Host or Origin not allowed, `401`/`403` for auth, else MCP. */
  handle(req: IncomingMessage, res: ServerResponse): void;
  /** Aborts requests in flight (long `events_wait` polls included). */
  close(): Promise<void>;
}

/** A verified token lives this long in the SDK's eyes; every request verifies it again. */
const VERIFIED_FOR_SECONDS = 300;

/**
 * The Streamable HTTP endpoint of Colloquy's MCP server, stateless: each request gets a fresh server
 * (`createMcpHandler`), so any instance behind a load balancer can answer any request. In front of
 * it: the SDK's Host and Origin guards (`gateway.mcp.allowedHosts` / `allowedOrigins`) and its
 * bearer gate, whose verifier looks the token's SHA-256 up in the Store (a revoked or unknown token
 * is a `401`, a call outside the token's scopes a `403 insufficient_scope`).
 *
 * @param options - gateway, config, token lookup
 * @returns the handler
 */
export function createMcpHttpHandler(options: McpHttpHandlerOptions): McpHttpHandler {
  const log = (options.logger ?? silentLogger).child({ component: 'mcp-http' });
  const { mcp } = options.config.gateway;
  const validHost = hostHeaderValidation(mcp.allowedHosts);
  const validOrigin = originValidation(mcp.allowedOrigins);
  const handler = createMcpHandler(
    ({ authInfo }) =>
      createMcpToolServer({
        gateway: options.gateway,
        config: options.config,
        client: identityOf(authInfo),
        ...(options.version ? { version: options.version } : {}),
        ...(options.track ? { track: options.track } : {}),
      }),
    { onerror: (error) => log.debug({ err: error }, 'MCP request failed') },
  );
  const gate = requireBearerAuth({
    verifier: {
      async verifyAccessToken(token: string): Promise<AuthInfo> {
        const record = await options.tokens.getMcpTokenByHash(hashMcpToken(token));
        if (!record || record.revokedAt !== undefined) {
          throw new OAuthError(
            OAuthErrorCode.InvalidToken,
            'Unknown or revoked token: create one with colloquy mcp token create.',
          );
        }
        const identity: McpClientIdentity = {
          agentId: record.agentId,
          name: record.name,
          scopes: record.scopes,
          visibility: record.visibility,
        };
        return {
          token,
          clientId: record.name,
          scopes: [...record.scopes],
          expiresAt: Math.floor(Date.now() / 1000) + VERIFIED_FOR_SECONDS,
          extra: { colloquy: identity },
        };
      },
    },
  });
  const node = toNodeHandler(
    {
      async fetch(request) {
        const auth = await gate(request);
        if (auth instanceof Response) return auth;
        return handler.fetch(request, { authInfo: auth });
      },
    },
    { onerror: (error) => log.warn({ err: error }, 'MCP request could not be served') },
  );
  return {
    handle(req, res) {
      if (!validHost(req, res) || !validOrigin(req, res)) {
        log.info(
          { host: req.headers.host, origin: req.headers.origin },
          'MCP request refused: Host or Origin not allowed',
        );
        return;
      }
      void node(req, res);
    },
    close: () => handler.close(),
  };
}

function identityOf(authInfo: AuthInfo | undefined): McpClientIdentity {
  const identity = authInfo?.extra?.colloquy as McpClientIdentity | undefined;
  // The gate runs before the handler on every request, so an unauthenticated server is never built.
  if (!identity) throw new Error('MCP request without a verified token reached the server');
  return {
    agentId: identity.agentId,
    name: identity.name,
    scopes: identity.scopes as McpScope[],
    visibility: identity.visibility as SessionVisibility,
  };
}
