/**
 * The Colloquy domain, no I/O: for app, tool and channel authors. Session keys, configuration, send
 * policy and visibility, the records a session is made of, the tool contract and the session tools, and
 * the `ChannelPlugin` contract.
 *
 * Other audiences have doors of their own: `@colloquy/core/store` for store authors,
 * `@colloquy/core/gateway` for clients of the Gateway, `@colloquy/core/model` for model provider authors.
 *
 * @packageDocumentation
 */
// biome-ignore-all assist/source/organizeImports: the exports are grouped by audience, everyday API first.

// --- errors and logs (everyone) ---
export type { ErrorCode } from './errors/colloquy-error.js';
export { ColloquyError, isColloquyError } from './errors/colloquy-error.js';
export type { Logger } from './interfaces/logger.js';
export { silentLogger } from './interfaces/logger.js';

// --- configuration (app authors) ---
export type {
  ColloquyConfig,
  ColloquyConfigInput,
  ConfigCheckResult,
  ConfigIssue,
  DmScope,
  SendPolicyConfig,
  SessionVisibility,
} from './config/index.js';
export { checkConfig, ColloquyConfigSchema, formatIssues, resolveConfig } from './config/index.js';

// --- session keys ---
export type {
  DeriveSessionKeyOptions,
  ParsedSessionKey,
  SessionKeyInput,
  SessionKeyParseResult,
} from './keys/index.js';
export { deriveSessionKey, normalizeSessionKey, parseSessionKey } from './keys/index.js';

// --- send policy and visibility: may session A send to B, may A see B? ---
export type {
  LineageRecord,
  SendPolicyDecision,
  SendPolicyTarget,
  SessionAccessDecision,
  SessionAccessInput,
  SessionAction,
  SessionLineage,
} from './policy/index.js';
export {
  checkSessionAccess,
  effectiveVisibility,
  evaluateSendPolicy,
  readSessionLineage,
} from './policy/index.js';

// --- records ---
export type {
  ChatType,
  ContentBlock,
  DeliveryContext,
  MediaAttachment,
  SessionRecord,
  StoredMessage,
  ThreadBinding,
  TranscriptMessage,
} from './interfaces/records.js';

// --- tools (tool authors) ---
export type { AgentTool, ToolResult } from './interfaces/tool.js';
export { toolResult } from './interfaces/tool.js';
export type { Gateway } from './interfaces/gateway.js';
export type { SessionToolsOptions } from './tools/index.js';
export { createSessionTools } from './tools/index.js';

// --- the channel contract (channel authors) ---
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
export { threadBindingKey } from './store/thread-binding-key.js';
export type { PairingAccess } from './pairing/index.js';
export type { SectionOptions } from './config/index.js';
export { resolveSection, sectionError } from './config/index.js';
export type { BackoffOptions, ReceiveUntilStoredOptions } from './retry/index.js';
export { backoffDelay, receiveUntilStored } from './retry/index.js';
