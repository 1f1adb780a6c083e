// @colloquy/core/internal: what Colloquy's own packages share beyond the public doors (the runtime's
// gateway and spawn path use the same limits and checks as core's session tools; the app and the plugins
// use the same key, config and pairing helpers). No semver promise of its own: every @colloquy package
// is released in one fixed version group and depends on core at the exact same version (see "How versions
// move" in the README), so a change here ships together with the code that uses it. Third parties use the
// public doors: `@colloquy/core`, `@colloquy/core/store`, `@colloquy/core/gateway`, `@colloquy/core/model`.

// --- config ---
export type {
  AgentEntry,
  GroupContextConfig,
  ResolvedAgentConfig,
  SectionCheck,
  SendPolicyRule,
  SessionScope,
} from './config/index.js';
export {
  agentConfigFor,
  checkSection,
  DEFAULT_CONFIG,
  defaultAgentId,
  describeConfigValue,
  formatIssue,
  isToolAllowed,
  schemaIssues,
  unknownSettingIssue,
} from './config/index.js';
// --- errors ---
export { toColloquyError } from './errors/colloquy-error.js';
// --- history: sanitising, redaction, forks, text limits ---
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
  redactSecrets,
  sanitizeHistory,
  truncateText,
  utf8ByteLength,
} from './history/index.js';
// --- session keys ---
export type { ClassifyOptions, KeyContext, SessionKeyResolution } from './keys/index.js';
export {
  agentIdFromSessionKey,
  classifySessionKey,
  formatSessionKey,
  isReservedSessionKey,
  mainSessionKey,
  resolveSessionKeyAlias,
  subagentSessionKey,
  toDisplayKey,
  tryResolveSessionKey,
} from './keys/index.js';
// --- MCP clients ---
export {
  effectiveMcpVisibility,
  hashMcpToken,
  isMcpClientSessionKey,
  mcpClientSessionKey,
} from './mcp/index.js';
// --- pairing ---
export { createPairingAccess, PAIRING_CODE_TTL_MS, requestPairing } from './pairing/index.js';
// --- policy ---
export { MAX_LINEAGE_DEPTH, parseSendCommand } from './policy/index.js';
// --- retries ---
export { sleep } from './retry/index.js';
// --- thread bindings ---
export { createThreadBindingAccess } from './store/thread-binding-access.js';
// --- usage ---
export { addUsage } from './store/token-usage.js';
// --- the session tools' limits, spawn attachments and names ---
export type { AttachmentLimits, CheckedAttachment, SubagentMeta } from './tools/index.js';
export {
  ANNOUNCE_SKIP,
  ATTACHMENT_MANIFEST,
  attachmentPlaceholder,
  checkAttachments,
  configuredSecrets,
  descendantsOf,
  REPLY_SKIP,
  SESSION_TOOL_NAMES,
  SESSIONS_YIELD_MAX_REASON_CHARS,
  SESSIONS_YIELD_MAX_TIMEOUT_SECONDS,
  SUBAGENT_META_KEY,
  searchSnippet,
  subagentMetaOf,
} from './tools/index.js';
