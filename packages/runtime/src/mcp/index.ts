// @colloquy/runtime/mcp: Colloquy's sessions as an MCP server (official SDK v2). A subpath of its own,
// so the runtime's main entry does not load the SDK: the runtime loads it on the first /mcp request.

// --- advanced: one client's server ---
export {
  createMcpToolServer,
  type McpToolServerOptions,
} from './server/create-mcp-tool-server.js';
export type { McpEvent } from './server/events-wait-tool.js';
export type { McpClientIdentity } from './server/mcp-client-identity.js';
// --- serve ---
export {
  createMcpHttpHandler,
  type McpHttpHandler,
  type McpHttpHandlerOptions,
} from './server/mcp-http-handler.js';
export { type McpStdioOptions, type McpStdioServer, serveMcpStdio } from './server/serve-mcp-stdio.js';
