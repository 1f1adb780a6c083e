// @colloquy/core/internal: helpers our own packages share (the runtime's gateway and spawn path use the same
// limits and checks as core's session tools). Not a public API: no semver, no API report, may change or go
// away in any release. Third parties use `@colloquy/core`.

// --- history forked into a sub-agent, text limits ---
export type { ForkedHistory } from './history/index.js';
export {
  FORK_MAX_BYTES,
  FORK_MAX_MESSAGES,
  forkHistory,
  truncateText,
  utf8ByteLength,
} from './history/index.js';
// --- send policy ---
export type { SendPolicyDecision, SendPolicyTarget } from './policy/index.js';
export { evaluateSendPolicy } from './policy/index.js';
// --- usage ---
export { addUsage } from './store/token-usage.js';
// --- session tool limits and spawn attachments ---
export type { AttachmentLimits, CheckedAttachment, SubagentMeta } from './tools/index.js';
export {
  ATTACHMENT_MANIFEST,
  attachmentPlaceholder,
  checkAttachments,
  SESSIONS_YIELD_MAX_REASON_CHARS,
  SESSIONS_YIELD_MAX_TIMEOUT_SECONDS,
  SUBAGENT_META_KEY,
  subagentMetaOf,
} from './tools/index.js';
