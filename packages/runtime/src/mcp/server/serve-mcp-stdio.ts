import type { Transport } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { createMcpToolServer, type McpToolServerOptions } from './create-mcp-tool-server.js';

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

/**
 * Serves the MCP tools over stdio, for a host that starts `colloquy mcp serve` as a child process.
 * The tools call `gateway` (usually the WebSocket client of the running bot, authenticated with
 * its admin token), so they are exactly the tools served at `/mcp`.
 *
 * @param options - gateway, config, the client identity, and optionally the transport
 * @returns the server; it runs until the host closes stdin or `close()` is called
 */
export function serveMcpStdio(options: McpStdioOptions): McpStdioServer {
  const { transport, onError, ...serverOptions } = options;
  return serveStdio(() => createMcpToolServer(serverOptions), {
    ...(transport ? { transport } : {}),
    ...(onError ? { onerror: onError } : {}),
  });
}
