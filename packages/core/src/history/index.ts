export type { ForkedHistory } from './fork-history.js';
export { FORK_MAX_BYTES, FORK_MAX_MESSAGES, forkHistory } from './fork-history.js';
export type { RedactionResult, Redactor } from './redact-secrets.js';
export { createRedactor, REDACTION_MARK, redactSecrets } from './redact-secrets.js';
export type { SanitizedHistory, SanitizedMessage, SanitizeHistoryOptions } from './sanitize-history.js';
export {
  HISTORY_MAX_BYTES,
  HISTORY_OMITTED_PLACEHOLDER,
  HISTORY_TEXT_LIMIT,
  keepsMessage,
  sanitizeHistory,
} from './sanitize-history.js';
export { cutText, TRUNCATION_SUFFIX, truncateText, utf8ByteLength } from './truncate-text.js';
