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
  ForkedHistory,
  RedactionResult,
  Redactor,
  SanitizedHistory,
  SanitizedMessage,
  SanitizeHistoryOptions,
} from './history/index.js';
export {
  createRedactor,
  FORK_MAX_BYTES,
  FORK_MAX_MESSAGES,
  forkHistory,
  HISTORY_MAX_BYTES,
  HISTORY_OMITTED_PLACEHOLDER,
  HISTORY_TEXT_LIMIT,
  REDACTION_MARK,
  redactSecrets,
  sanitizeHistory,
  TRUNCATION_SUFFIX,
  truncateText,
  utf8ByteLength,
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
  SessionKind,
  SessionOrigin,
  SessionRecord,
  SessionStatus,
  StoredMessage,
  ThreadBinding,
  TokenUsage,
  TranscriptMessage,
} from './interfaces/records.js';
// --- records and interfaces ---
export { SESSION_KINDS, TERMINAL_RUN_STATUSES } from './interfaces/records.js';
export type {
  MessageSearchHit,
  MessageSearchQuery,
  MessageSearchResult,
  OutboxListQuery,
  PairingListQuery,
  RunListQuery,
  SessionListQuery,
  SessionPatch,
  Store,
  StoreOperations,
  StoreTransaction,
  TailOptions,
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
  ThreadSuffix,
} from './keys/index.js';
export {
  agentIdFromSessionKey,
  classifySessionKey,
  deriveChannelField,
  deriveSessionKey,
  formatSessionKey,
  isReservedSessionKey,
  MAX_SESSION_KEY_LENGTH,
  mainSessionKey,
  normalizeSessionKey,
  parseSessionKey,
  resolveSessionKeyAlias,
  subagentSessionKey,
  toDisplayKey,
  tryResolveSessionKey,
} from './keys/index.js';
// --- pairing ---
export type { PairingAccess, PairingPeer, PairingRequestResult } from './pairing/index.js';
export {
  approvePairing,
  createPairingAccess,
  listPairings,
  MAX_PENDING_PAIRINGS,
  normalizePairingCode,
  PAIRING_CODE_TTL_MS,
  requestPairing,
  revokePairing,
} from './pairing/index.js';
// --- policy ---
export type {
  SendPolicyDecision,
  SendPolicyTarget,
  SessionAccessDecision,
  SessionAccessInput,
  SessionAction,
  UnreachableTargetInput,
} from './policy/index.js';
export {
  checkSessionAccess,
  effectiveVisibility,
  evaluateSendPolicy,
  parseSendCommand,
  unreachableTargetReason,
} from './policy/index.js';
// --- retries ---
export type { BackoffOptions } from './retry/index.js';
export { backoffDelay, sleep } from './retry/index.js';
// --- stores ---
export { MemoryStore } from './store/memory-store.js';
export {
  SEARCH_INDEX_MAX_CHARS,
  SEARCH_MAX_TERMS,
  scoreSearchText,
  searchableText,
  searchTerms,
} from './store/search-text.js';
// --- for Store implementers ---
export type { SynchronousStoreEngine, SynchronousStoreOperations } from './store/serialized-store.js';
export { SerializedStore } from './store/serialized-store.js';
export { compareSessionsNewestFirst, matchesSessionQuery } from './store/session-query.js';
export { createThreadBindingAccess } from './store/thread-binding-access.js';
export { threadBindingKey } from './store/thread-binding-key.js';
export type {
  ArgsCheck,
  AttachmentLimits,
  AttachmentNameCheck,
  AttachmentsCheck,
  CheckedAttachment,
  SessionListRow,
  SessionStatusToolResult,
  SessionsHistoryResult,
  SessionsListResult as SessionsListToolResult,
  SessionsSearchHit,
  SessionsSearchToolResult,
  SessionsSendResult,
  SessionsSpawnResult,
  SessionsYieldResult,
  SessionToolsOptions,
  Snippet,
  SpawnableAgent,
  SubagentMeta,
  SubagentPromptInput,
  SubagentRow,
  SubagentsResult,
  ToolFailure,
  TreeNode as SubagentTreeNode,
} from './tools/index.js';
// --- session tools ---
export {
  ACTIVE_RUN_STATUSES,
  ANNOUNCE_SKIP,
  ATTACHMENT_MANIFEST,
  ATTACHMENT_NAME_MAX_BYTES,
  attachmentPlaceholder,
  base64DecodedBytes,
  checkAttachmentName,
  checkAttachments,
  configuredSecrets,
  createSessionTools,
  isStrictBase64,
  REPLY_SKIP,
  SEARCH_SNIPPET_CHARS,
  SESSION_TOOL_NAMES,
  SESSIONS_HISTORY_DEFAULT_LIMIT,
  SESSIONS_HISTORY_MAX_LIMIT,
  SESSIONS_LIST_HISTORY_CONCURRENCY,
  SESSIONS_LIST_MAX_BYTES,
  SESSIONS_LIST_MAX_LIMIT,
  SESSIONS_LIST_MAX_MESSAGES,
  SESSIONS_SEARCH_DEFAULT_LIMIT,
  SESSIONS_SEARCH_MAX_LIMIT,
  SESSIONS_SEND_DEFAULT_TIMEOUT_SECONDS,
  SESSIONS_SPAWN_MAX_TASK_CHARS,
  SESSIONS_SPAWN_MAX_TIMEOUT_SECONDS,
  SESSIONS_YIELD_MAX_REASON_CHARS,
  SESSIONS_YIELD_MAX_TIMEOUT_SECONDS,
  SUBAGENT_META_KEY,
  searchSnippet,
  spawnableAgents,
  subagentMetaOf,
  subagentSystemPrompt,
  validateToolArgs,
} from './tools/index.js';
