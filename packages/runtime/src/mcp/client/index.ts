export type {
  McpHttpServerConfig,
  McpServerConfig,
  McpStdioServerConfig,
  McpToolSourceOptions,
} from './mcp-client-options.js';
export type { McpServerState } from './mcp-server-connection.js';
export { MCP_SERVER_NAME_PATTERN } from './mcp-tool-name.js';
export {
  createMcpToolSource,
  type McpServerStatus,
  type McpToolSet,
  type McpToolSource,
} from './mcp-tool-source.js';
