export type { IssuedMcpToken, IssueMcpTokenOptions, McpTokenStore } from './mcp-tokens.js';
export {
  effectiveMcpVisibility,
  hashMcpToken,
  isMcpClientSessionKey,
  issueMcpToken,
  MCP_SCOPES,
  MCP_TOKEN_PREFIX,
  mcpClientSessionKey,
  mcpTokenStore,
  parseMcpScopes,
} from './mcp-tokens.js';
