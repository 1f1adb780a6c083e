// The session tools: model-callable, Gateway-only, guarded by checkSessionAccess.
export { ANNOUNCE_SKIP, REPLY_SKIP } from './agent-to-agent.js';
export type { SpawnableAgent } from './agents-list.js';
export { spawnableAgents } from './agents-list.js';
export type {
  AttachmentLimits,
  AttachmentNameCheck,
  AttachmentsCheck,
  CheckedAttachment,
} from './attachments.js';
export {
  ATTACHMENT_MANIFEST,
  ATTACHMENT_NAME_MAX_BYTES,
  attachmentPlaceholder,
  base64DecodedBytes,
  checkAttachmentName,
  checkAttachments,
  isStrictBase64,
} from './attachments.js';
export type { Snippet } from './search-snippet.js';
export { SEARCH_SNIPPET_CHARS, searchSnippet } from './search-snippet.js';
export type { SessionStatusToolResult } from './session-status.js';
export { createSessionTools, SESSION_TOOL_NAMES } from './session-tools.js';
export type { SessionsHistoryResult } from './sessions-history.js';
export { SESSIONS_HISTORY_DEFAULT_LIMIT, SESSIONS_HISTORY_MAX_LIMIT } from './sessions-history.js';
export type { SessionListRow, SessionsListResult } from './sessions-list.js';
export {
  SESSIONS_LIST_HISTORY_CONCURRENCY,
  SESSIONS_LIST_MAX_BYTES,
  SESSIONS_LIST_MAX_LIMIT,
  SESSIONS_LIST_MAX_MESSAGES,
} from './sessions-list.js';
export type { SessionsSearchHit, SessionsSearchToolResult } from './sessions-search.js';
export { SESSIONS_SEARCH_DEFAULT_LIMIT, SESSIONS_SEARCH_MAX_LIMIT } from './sessions-search.js';
export type { SessionsSendResult, SessionsSendWatching } from './sessions-send.js';
export { SESSIONS_SEND_DEFAULT_TIMEOUT_SECONDS } from './sessions-send.js';
export type { SessionsSpawnResult } from './sessions-spawn.js';
export { SESSIONS_SPAWN_MAX_TASK_CHARS, SESSIONS_SPAWN_MAX_TIMEOUT_SECONDS } from './sessions-spawn.js';
export type { SessionsYieldResult } from './sessions-yield.js';
export { SESSIONS_YIELD_MAX_REASON_CHARS, SESSIONS_YIELD_MAX_TIMEOUT_SECONDS } from './sessions-yield.js';
export type { SubagentRow, SubagentsResult } from './subagents.js';
export type { SubagentMeta, SubagentPromptInput } from './subagents-meta.js';
export { SUBAGENT_META_KEY, subagentMetaOf, subagentSystemPrompt } from './subagents-meta.js';
export type { TreeNode } from './subagents-tree.js';
export { ACTIVE_RUN_STATUSES, descendantsOf } from './subagents-tree.js';
export type { SessionToolsOptions, ToolFailure } from './tool-context.js';
export { configuredSecrets } from './tool-context.js';
export type { ArgsCheck } from './validate-args.js';
export { validateToolArgs } from './validate-args.js';
