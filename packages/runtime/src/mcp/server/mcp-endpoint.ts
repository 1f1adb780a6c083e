import type { IncomingMessage, ServerResponse } from 'node:http';
import { isColloquyError } from '@colloquy/core';
import { mcpTokenStore } from '@colloquy/core/gateway';
import type { RuntimeGateway } from '../../gateway/runtime-gateway.js';
import type { RuntimeContext } from '../../runtime/runtime-context.js';
import type { McpHttpHandler } from './mcp-http-handler.js';

/**
 * The runtime's `/mcp` endpoint over its own gateway and store. The MCP SDK is loaded on the first
 * request, so a runtime whose clients never use MCP does not pay for loading it at start.
 *
 * A store that keeps no MCP tokens (a third-party store written before them) cannot authenticate
 * anyone: the endpoint then answers every request `503` with the reason, and the owner gets one
 * warning at start.
 */
export function createMcpEndpoint(ctx: RuntimeContext, gateway: RuntimeGateway): McpHttpHandler {
  let tokens: ReturnType<typeof mcpTokenStore>;
  try {
    tokens = mcpTokenStore(ctx.store);
  } catch (error) {
    if (!isColloquyError(error)) throw error;
    ctx.log.warn({ err: error }, 'MCP over HTTP is off: the store keeps no MCP tokens');
    const body = JSON.stringify({ error: 'mcp_unavailable', error_description: error.message });
    return {
      handle(_req, res) {
        res.writeHead(503, { 'content-type': 'application/json' });
        res.end(body);
      },
      close: () => Promise.resolve(),
    };
  }
  let loaded: Promise<McpHttpHandler> | undefined;
  const load = () =>
    (loaded ??= import('./mcp-http-handler.js').then(({ createMcpHttpHandler }) =>
      createMcpHttpHandler({
        gateway,
        config: ctx.config,
        tokens,
        track: (work) => ctx.track(work),
        logger: ctx.log,
      }),
    ));
  return {
    handle(req: IncomingMessage, res: ServerResponse) {
      load().then(
        (handler) => handler.handle(req, res),
        (error: unknown) => {
          ctx.log.error({ err: error }, 'the MCP server could not be loaded');
          res.writeHead(500, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({
              error: 'server_error',
              error_description: 'The MCP server could not be loaded.',
            }),
          );
        },
      );
    },
    async close() {
      if (loaded) await (await loaded).close();
    },
  };
}
