export type { ClassifyOptions } from './classify-session-key.js';
export { agentIdFromSessionKey, classifySessionKey, deriveChannelField } from './classify-session-key.js';
export type { DeriveSessionKeyOptions, SessionKeyInput } from './derive-session-key.js';
export { deriveSessionKey, subagentSessionKey } from './derive-session-key.js';
export type { KeyContext, SessionKeyResolution } from './key-alias.js';
export {
  isReservedSessionKey,
  mainSessionKey,
  resolveSessionKeyAlias,
  toDisplayKey,
  tryResolveSessionKey,
} from './key-alias.js';
export type { ParsedSessionKey, SessionKeyParseResult, ThreadSuffix } from './session-key.js';
export {
  formatSessionKey,
  MAX_SESSION_KEY_LENGTH,
  normalizeSessionKey,
  parseSessionKey,
} from './session-key.js';
