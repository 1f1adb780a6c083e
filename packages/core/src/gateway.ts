/**
 * For clients that drive Colloquy from outside a turn (a CLI, a dashboard, a web page, an MCP host): the
 * Gateway's methods with their parameters and results, its events, the shapes the session tools return,
 * and the owner's operations around them (approving pairings, issuing MCP access tokens).
 *
 * @packageDocumentation
 */
// biome-ignore-all assist/source/organizeImports: the exports are grouped by what a reader looks for.

// --- the Gateway: methods, parameters, results, events ---
export type {
  AgentInfo,
  AgentRunParams,
  AgentRunResult,
  AgentSessionInit,
  AgentWaitResult,
  AttachmentFileReceipt,
  AttachmentReceipt,
  DeliveryOutcome,
  Gateway,
  GatewayEvent,
  GatewayMethod,
  GatewayMethods,
  GatewayParams,
  GatewayResult,
  InheritedMessage,
  McpPendingParams,
  McpPendingResult,
  RunSummary,
  SessionStatusParams,
  SessionStatusResult,
  SessionsListParams,
  SessionsListResult,
  SessionsPatchFields,
  SessionsResolveParams,
  SessionsSearchParams,
  SessionsSearchResult,
  SessionsTreeParams,
  SessionsTreeResult,
  SessionYieldParams,
  SessionYieldResult,
  SessionYieldState,
  SpawnAttachment,
  SpawnTreeAnnounce,
  SpawnTreeNode,
  SpawnTreeRun,
  SpawnTreeToolCall,
} from './interfaces/gateway.js';
// --- the owner's operations: pairing and MCP access tokens ---
export type {
  Lane,
  McpScope,
  McpTokenRecord,
  PairingRecord,
  PairingStatus,
  RunRecord,
  RunStatus,
  SendPolicyOverride,
  SessionKind,
  SessionOrigin,
  SessionStatus,
  TokenUsage,
} from './interfaces/records.js';
export type { IssuedMcpToken, IssueMcpTokenOptions, McpTokenStore } from './mcp/index.js';
export { issueMcpToken, MCP_SCOPES, MCP_TOKEN_PREFIX, mcpTokenStore, parseMcpScopes } from './mcp/index.js';
export type { PairingPeer, PairingRequestResult } from './pairing/index.js';
export { approvePairing, listPairings, revokePairing } from './pairing/index.js';
// --- what the session tools return ---
export type { SanitizedMessage } from './history/index.js';
export type {
  SessionListRow,
  SessionStatusToolResult,
  SessionsHistoryResult,
  SessionsListResult as SessionsListToolResult,
  SessionsSearchHit,
  SessionsSearchToolResult,
  SessionsSendResult,
  SessionsSendWatching,
  SessionsSpawnResult,
  SessionsYieldResult,
  Snippet,
  SubagentRow,
  SubagentsResult,
  ToolFailure,
  TreeNode as SubagentTreeNode,
} from './tools/index.js';
