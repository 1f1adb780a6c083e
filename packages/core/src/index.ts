// @colloquy/core: the domain, no I/O.

// --- config ---
export type {
  AgentEntry,
  ColloquyConfig,
  ColloquyConfigInput,
  ConfigCheckResult,
  ConfigIssue,
  DmScope,
  GroupContextConfig,
  ModelPrice,
  ModelProviderConfig,
  ModelProviderLimits,
  ResolvedAgentConfig,
  SectionCheck,
  SectionOptions,
  SendPolicyConfig,
  SendPolicyRule,
  SessionScope,
  SessionVisibility,
} from './config/index.js';
export {
  agentConfigFor,
  ColloquyConfigSchema,
  checkConfig,
  checkSection,
  DEFAULT_CONFIG,
  defaultAgentId,
  describeConfigValue,
  formatIssue,
  formatIssues,
  isToolAllowed,
  resolveConfig,
  resolveSection,
  schemaIssues,
  sectionError,
  unknownSettingIssue,
} from './config/index.js';
export type { ErrorCode } from './errors/colloquy-error.js';
// --- errors ---
export { ColloquyError, isColloquyError, toColloquyError } from './errors/colloquy-error.js';
// --- history ---
export type {
  RedactionResult,
  Redactor,
  SanitizedHistory,
  SanitizedMessage,
  SanitizeHistoryOptions,
} from './history/index.js';
export {
  createRedactor,
  redactSecrets,
  sanitizeHistory,
} from './history/index.js';
export type {
  ChannelCapabilities,
  ChannelCommand,
  ChannelContext,
  ChannelLease,
  ChannelPlugin,
  ChannelRelay,
  ChannelStatus,
  InboundMessage,
  MarkdownDialect,
  OutboundMessage,
  SendResult,
  ThreadBindingAccess,
  ThreadRequest,
} from './interfaces/channel-plugin.js';
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
  RunSummary,
  SessionStatusParams,
  SessionStatusResult,
  SessionsListParams,
  SessionsListResult,
  SessionsPatchFields,
  SessionsResolveParams,
  SessionsSearchParams,
  SessionsSearchResult,
  SessionYieldParams,
  SessionYieldResult,
  SessionYieldState,
  SpawnAttachment,
} from './interfaces/gateway.js';
export type { Logger } from './interfaces/logger.js';
export { silentLogger } from './interfaces/logger.js';
export type {
  FinishReason,
  ModelMessage,
  ModelProvider,
  ModelRequest,
  ModelStreamEvent,
  ModelToolSpec,
} from './interfaces/model-provider.js';
export type {
  AnnounceOutcome,
  ChatType,
  ContentBlock,
  DeliveryContext,
  InboxEntry,
  Lane,
  McpScope,
  McpTokenRecord,
  MediaAttachment,
  MessageProvenance,
  MessageRole,
  OutboxEntry,
  OutboxStatus,
  PairingRecord,
  PairingStatus,
  RunRecord,
  RunStatus,
  SendPolicyOverride,
  SessionChangeKind,
  SessionKind,
  SessionOrigin,
  SessionRecord,
  SessionStatus,
  SessionWatch,
  StoredMessage,
  ThreadBinding,
  TokenUsage,
  TranscriptMessage,
} from './interfaces/records.js';
// --- records and interfaces ---
export { SESSION_CHANGE_KINDS, SESSION_KINDS, TERMINAL_RUN_STATUSES } from './interfaces/records.js';
export type {
  McpTokenListQuery,
  MessageSearchHit,
  MessageSearchQuery,
  MessageSearchResult,
  OutboxListQuery,
  PairingListQuery,
  RunListQuery,
  SessionChanges,
  SessionListQuery,
  SessionPatch,
  Store,
  StoreOperations,
  StoreTransaction,
  TailOptions,
  WatchListQuery,
} from './interfaces/store.js';
export type { AgentTool, ToolResult } from './interfaces/tool.js';
export { toolResult } from './interfaces/tool.js';
// --- session keys ---
export type {
  ClassifyOptions,
  DeriveSessionKeyOptions,
  KeyContext,
  ParsedSessionKey,
  SessionKeyInput,
  SessionKeyParseResult,
  SessionKeyResolution,
} from './keys/index.js';
export {
  agentIdFromSessionKey,
  classifySessionKey,
  deriveSessionKey,
  formatSessionKey,
  isReservedSessionKey,
  mainSessionKey,
  normalizeSessionKey,
  parseSessionKey,
  resolveSessionKeyAlias,
  subagentSessionKey,
  toDisplayKey,
  tryResolveSessionKey,
} from './keys/index.js';
// --- MCP access tokens ---
export type { IssuedMcpToken, IssueMcpTokenOptions, McpTokenStore } from './mcp/index.js';
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
} from './mcp/index.js';
// --- pairing ---
export type { PairingAccess, PairingPeer, PairingRequestResult } from './pairing/index.js';
export {
  approvePairing,
  createPairingAccess,
  listPairings,
  PAIRING_CODE_TTL_MS,
  requestPairing,
  revokePairing,
} from './pairing/index.js';
// --- policy ---
export type {
  LineageRecord,
  SessionAccessDecision,
  SessionAccessInput,
  SessionAction,
  SessionLineage,
} from './policy/index.js';
export {
  checkSessionAccess,
  effectiveVisibility,
  MAX_LINEAGE_DEPTH,
  parseSendCommand,
  readSessionLineage,
} from './policy/index.js';
// --- retries ---
export type { BackoffOptions, ReceiveUntilStoredOptions } from './retry/index.js';
export { backoffDelay, receiveUntilStored, sleep } from './retry/index.js';
// --- stores ---
export { MemoryStore } from './store/memory-store.js';
// --- for Store implementers ---
export type { SqlValue } from './store/record-rows.js';
export {
  mcpTokenRow,
  outboxRow,
  pairingRow,
  runRow,
  serializeRecord,
  sessionRow,
} from './store/record-rows.js';
export {
  SEARCH_INDEX_MAX_CHARS,
  SEARCH_MAX_WORD_CHARS,
  searchableText,
  searchTerms,
  searchWords,
} from './store/search-text.js';
export type { SynchronousStoreEngine, SynchronousStoreOperations } from './store/serialized-store.js';
export { SerializedStore, type SerializedStoreOptions } from './store/serialized-store.js';
export {
  changeWindowStart,
  isPatchChange,
  isStatusChange,
  SESSION_BOOKKEEPING_FIELDS,
  SESSION_CHANGE_WINDOW,
  summarizeChanges,
} from './store/session-changes.js';
export { foldAlsoKeys } from './store/session-query.js';
export { createThreadBindingAccess } from './store/thread-binding-access.js';
export { threadBindingKey } from './store/thread-binding-key.js';
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
  SessionToolsOptions,
  Snippet,
  SubagentRow,
  SubagentsResult,
  ToolFailure,
  TreeNode as SubagentTreeNode,
} from './tools/index.js';
// --- session tools ---
export {
  ANNOUNCE_SKIP,
  configuredSecrets,
  createSessionTools,
  REPLY_SKIP,
  SESSION_TOOL_NAMES,
  searchSnippet,
} from './tools/index.js';
