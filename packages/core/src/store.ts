/**
 * For store authors: the `Store` contract and what a store needs to keep it the way the conformance
 * suite (`@colloquy/testkit/store-conformance`) expects. The record types a store keeps, the row helpers
 * the SQL stores share, `SerializedStore` for a synchronous embedded engine, the change-window helpers
 * behind `stateVersion`, the search-text rules every store indexes by, and `MemoryStore`, the reference
 * implementation.
 *
 * @packageDocumentation
 */
// biome-ignore-all assist/source/organizeImports: the exports are grouped by what a reader looks for.

// --- the records a store keeps ---
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
export { SESSION_CHANGE_KINDS, SESSION_KINDS, TERMINAL_RUN_STATUSES } from './interfaces/records.js';
// --- the contract ---
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
// --- turn operations: one unit of work per step of a turn ---
export type {
  DeliveryRecord,
  DeliveryState,
  InboundCommit,
  InboundCommitResult,
  PlannedDelivery,
  RunPatch,
  TurnEnd,
  TurnEndResult,
  TurnOperations,
} from './interfaces/turn-operations.js';
export { addUsage } from './store/token-usage.js';
export { rowTurnOperations, turnOperations } from './store/turn-operations.js';
// --- batched reads: many sessions' runs or transcript tails in one call ---
export type { BatchReads } from './interfaces/batch-reads.js';
export { batchReads } from './store/batch-reads.js';

// --- the reference implementation ---
export { MemoryStore } from './store/memory-store.js';
// --- rows: records to and from SQL values ---
export type { SqlValue } from './store/record-rows.js';
export {
  mcpTokenRow,
  outboxRow,
  pairingRow,
  serializeRecord,
  sessionRow,
} from './store/record-rows.js';
export type {
  RunColumnField,
  RunColumnValues,
  SplitRunMeta,
  StoredRun,
} from './store/run-columns.js';
export {
  RUN_COLUMN_FIELDS,
  RUN_INDEXED_FIELDS,
  restoreRunColumns,
  runDeliveryJson,
  splitRunMeta,
  storedRun,
} from './store/run-columns.js';
export {
  SEARCH_INDEX_MAX_CHARS,
  SEARCH_MAX_WORD_CHARS,
  searchableText,
  searchTerms,
  searchWords,
} from './store/search-text.js';
// --- a synchronous embedded engine behind the async contract ---
export type {
  SerializedStoreOptions,
  SynchronousStoreEngine,
  SynchronousStoreOperations,
  SynchronousTurnOperations,
} from './store/serialized-store.js';
export { SerializedStore } from './store/serialized-store.js';
// --- change windows: stateVersion and session_status { changesSince } ---
export {
  changeWindowStart,
  isPatchChange,
  isStatusChange,
  SESSION_BOOKKEEPING_FIELDS,
  SESSION_CHANGE_WINDOW,
  summarizeChanges,
} from './store/session-changes.js';
// --- queries: search text and key folding every store applies alike ---
export { foldAlsoKeys, spawnerKeys } from './store/session-query.js';
