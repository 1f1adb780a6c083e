import { mcpClientSessionKey } from '@colloquy/core/internal';
import { type McpServer, ResourceNotFoundError, type Transport } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { createMcpToolServer, type McpToolServerOptions } from './create-mcp-tool-server.js';
import { MCP_EVENTS_URI } from './events-resource.js';
import { watchEvents } from './events-watcher.js';

/** Options of {@link serveMcpStdio}. */
export interface McpStdioOptions extends McpToolServerOptions {
  /** The transport to serve on. Default: this process's stdin and stdout. */
  transport?: Transport;
  /** Receives errors the connection cannot answer with. */
  onError?: (error: Error) => void;
}

/** A running stdio MCP server. */
export interface McpStdioServer {
  /** Closes the connection. */
  close(): Promise<void>;
}

/** The connection's server, and whether a 2025-era client asked for `colloquy://events` updates. */
interface ServingInstance {
  server: McpServer;
  /** An `initialize` handshake happened: the 2025-era rules apply (notify only after `resources/subscribe`). */
  legacy: boolean;
  subscribed: boolean;
}

/**
 * Serves the MCP tools over stdio, for a host that starts `colloquy mcp serve` as a child process.
 * The tools call `gateway` (usually the WebSocket client of the running bot, authenticated with
 * its admin token), so they are exactly the tools served at `/mcp`.
 *
 * The connection stays open, so events are pushed as well as polled: when a sub-agent announces
 * or a watched session changes, a client subscribed to `colloquy://events` (`resources/subscribe`,
 * or a `subscriptions/listen` filter naming it) gets `notifications/resources/updated`, then reads
 * the resource or calls `events_wait`.
 *
 * @param options - gateway, config, the client identity, and optionally the transport
 * @returns the server; it runs until the host closes stdin or `close()` is called
 */
export function serveMcpStdio(options: McpStdioOptions): McpStdioServer {
  const { transport, onError, ...serverOptions } = options;
  const { gateway, client } = serverOptions;
  let current: ServingInstance | undefined;
  const served = serveStdio(
    () => {
      const instance: ServingInstance = {
        server: createMcpToolServer({ ...serverOptions, eventSubscriptions: true }),
        legacy: false,
        subscribed: false,
      };
      acceptEventSubscriptions(instance);
      current = instance;
      return instance.server;
    },
    { ...(transport ? { transport } : {}), ...(onError ? { onerror: onError } : {}) },
  );
  const watcher = watchEvents({
    gateway,
    sessionKey: mcpClientSessionKey(client.agentId, client.name),
    open: () => gateway.call('mcp.open', { agentId: client.agentId, name: client.name }),
    async onNewEvent() {
      const instance = current;
      if (!instance?.server.isConnected() || (instance.legacy && !instance.subscribed)) return;
      await instance.server.server.sendResourceUpdated({ uri: MCP_EVENTS_URI });
    },
    ...(onError ? { onError } : {}),
  });
  return {
    async close() {
      watcher.close();
      await served.close();
    },
  };
}

/**
 * The 2025-era subscription handshake for `colloquy://events`. (A modern client subscribes with
 * `subscriptions/listen`, which the SDK's stdio entry serves and filters by itself.)
 */
function acceptEventSubscriptions(instance: ServingInstance): void {
  const { server } = instance.server;
  server.oninitialized = () => {
    instance.legacy = true;
  };
  const subscription = (subscribed: boolean) => async (request: { params: { uri: string } }) => {
    if (request.params.uri !== MCP_EVENTS_URI) {
      throw new ResourceNotFoundError(request.params.uri);
    }
    instance.subscribed = subscribed;
    return {};
  };
  server.setRequestHandler('resources/subscribe', subscription(true));
  server.setRequestHandler('resources/unsubscribe', subscription(false));
}
