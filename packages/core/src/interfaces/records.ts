/**
 * The persistent records of Colloquy: sessions, transcript messages, runs, the announce
 * outbox/inbox and thread bindings. Every Store keeps exactly these shapes.
 */

/** The kind of a session, derived from its key. `dm` and `subagent` are Colloquy additions. */
export type SessionKind = 'main' | 'dm' | 'group' | 'cron' | 'hook' | 'node' | 'subagent' | 'other';

/** All session kinds, in display order. */
export const SESSION_KINDS: readonly SessionKind[] = [
  'main',
  'dm',
  'group',
  'cron',
  'hook',
  'node',
  'subagent',
  'other',
];

/** The type of chat a message came from. */
export type ChatType = 'direct' | 'group' | 'channel';

/** Where replies for a session go: a channel plugin, its account, a chat, and optionally a thread/topic. */
export interface DeliveryContext {
  /** Channel plugin id, e.g. `telegram`, `discord`, `whatsapp`, `webchat`. */
  channel: string;
  /** The platform chat id replies are sent to. */
  to: string;
  /** The bot account within the channel (one plugin may run several bot accounts). */
  accountId: string;
  /** A thread or forum topic inside `to`, when bound. */
  threadId?: string;
}

/** A session's own send-policy override. Unset means inherit the configured rules. */
export type SendPolicyOverride = 'allow' | 'deny';

/** The state of a session as shown by the tools. */
export type SessionStatus = 'idle' | 'running' | 'done' | 'error' | 'timeout' | 'killed';

/** Token counters. `contextTokens` is the size of the last prompt sent to the model. */
export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  contextTokens?: number;
}

/** The requester's origin, captured when a sub-agent is spawned, so its announce finds its way home. */
export interface SessionOrigin {
  sessionKey: string;
  channel?: string;
  to?: string;
  accountId?: string;
  threadId?: string;
}

/** One session: its key, metadata and policy overrides. The transcript is stored separately. */
export interface SessionRecord {
  /** The normalised internal key, e.g. `agent:main:main` or `agent:main:telegram:group:-100123`. */
  key: string;
  /** A stable opaque id (UUID). A new id means a fresh transcript (`/new`). */
  sessionId: string;
  agentId: string;
  kind: SessionKind;
  /** Epoch milliseconds. */
  createdAt: number;
  /** Epoch milliseconds of the last activity; lists sort on it, newest first. */
  updatedAt: number;
  /** The channel recorded on the session (groups). */
  channel?: string;
  chatType?: ChatType;
  label?: string;
  displayName?: string;
  deliveryContext?: DeliveryContext;
  lastChannel?: string;
  lastTo?: string;
  lastAccountId?: string;
  model?: string;
  thinkingLevel?: string;
  verboseLevel?: string;
  systemSent?: boolean;
  abortedLastRun?: boolean;
  sendPolicy?: SendPolicyOverride;
  /** True when the session's agent runs sandboxed (clamps session-tool visibility). */
  sandboxed?: boolean;
  /** The internal key of the session that spawned this one. */
  spawnedBy?: string;
  /** 0 for top-level sessions, parent depth + 1 for spawned ones. */
  spawnDepth?: number;
  requesterOrigin?: SessionOrigin;
  usage?: TokenUsage;
  estimatedCostUsd?: number;
  status?: SessionStatus;
  startedAt?: number;
  endedAt?: number;
  /** Set when the session was archived; archived sessions are hidden from lists unless asked for. */
  archivedAt?: number;
  /** Free-form metadata owned by plugins and the runtime (JSON-serialisable). */
  meta?: Record<string, unknown>;
  /**
   * How many changes the session has had (see {@link SessionChangeKind}): set by the Store,
   * never by callers. `putSession` and `patchSession` ignore a value passed in. Absent on a
   * session that has not changed since it was stored (read it as 0).
   */
  stateVersion?: number;
}

/**
 * What changed a session, each change adding 1 to its `stateVersion`:
 * - `message`: one transcript message appended (an append of 3 messages is 3 changes);
 * - `status`: one of its runs started (became `running`) or ended (a terminal status);
 * - `patch`: its record changed outside the fields that only mirror runs and turns
 *   (see `SESSION_BOOKKEEPING_FIELDS`): label, model, send policy, delivery, archiving, ...
 */
export type SessionChangeKind = 'message' | 'status' | 'patch';

/** All session change kinds. */
export const SESSION_CHANGE_KINDS: readonly SessionChangeKind[] = ['message', 'status', 'patch'];

/**
 * A durable subscription: when the target's `stateVersion` passes `afterVersion`, the watcher's
 * inbox gets one notice and the watch is removed. One watch per `(watcherKey, targetKey)`.
 */
export interface SessionWatch {
  /** The session that gets the notice. */
  watcherKey: string;
  /** The session watched. */
  targetKey: string;
  /** The target's `stateVersion` when the watch was set: later changes make it due. */
  afterVersion: number;
  /** Unique per registration; the notice's inbox id is derived from it (idempotent delivery). */
  id: string;
  /** Epoch milliseconds. */
  createdAt: number;
}

/** A content block inside a transcript message. */
export type ContentBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; thinkingSignature?: string }
  | { type: 'image'; mimeType: string; data?: string; omitted?: true; bytes?: number }
  | { type: 'toolCall'; id: string; name: string; arguments: unknown; partialJson?: string };

/** Where a message came from when it was not typed by the session's own human. */
export interface MessageProvenance {
  kind: 'inter_session' | 'announce' | 'system';
  sourceSessionKey?: string;
  sourceTool?: string;
  sourceRunId?: string;
  /** Inter-session hop counter; chains longer than `session.agentToAgent.maxHops` are refused. */
  hop?: number;
}

/** A file or media item attached to an inbound message. */
export interface MediaAttachment {
  kind: 'image' | 'document' | 'audio' | 'voice' | 'video' | 'sticker';
  mimeType?: string;
  fileName?: string;
  /** Size in bytes, when known. */
  size?: number;
  /** A platform reference (file id or URL) that the plugin can resolve later. */
  ref?: string;
  caption?: string;
  /** Duration in seconds for audio/voice/video. */
  durationSeconds?: number;
}

/** Transcript roles. */
export type MessageRole = 'user' | 'assistant' | 'toolResult' | 'system';

/** A transcript message as written by the runtime. */
export interface TranscriptMessage {
  role: MessageRole;
  content: string | ContentBlock[];
  /** Epoch milliseconds. */
  timestamp: number;
  runId?: string;
  toolCallId?: string;
  toolName?: string;
  isError?: boolean;
  provenance?: MessageProvenance;
  sender?: { id: string; name?: string };
  media?: MediaAttachment[];
  /** Platform message id once delivered. */
  platformMessageId?: string;
  usage?: TokenUsage;
  cost?: number;
  details?: Record<string, unknown>;
}

/** A transcript message as stored: `seq` is assigned by the Store, strictly increasing per session. */
export interface StoredMessage extends TranscriptMessage {
  seq: number;
}

/** Command-queue lanes. */
export type Lane = 'main' | 'subagent' | 'cron';

/** Run states. `interrupted` marks runs a restart could not resume. */
export type RunStatus = 'queued' | 'running' | 'done' | 'error' | 'timeout' | 'killed' | 'interrupted';

/** Terminal run states. */
export const TERMINAL_RUN_STATUSES: readonly RunStatus[] = [
  'done',
  'error',
  'timeout',
  'killed',
  'interrupted',
];

/** How an announce ended, recorded on the run. */
export interface AnnounceOutcome {
  outcome: 'delivered' | 'skipped' | 'denied' | 'failed';
  reason?: string;
  at: number;
}

/** One agent run: a queued or executing turn of a session. */
export interface RunRecord {
  runId: string;
  sessionKey: string;
  lane: Lane;
  status: RunStatus;
  createdAt: number;
  updatedAt: number;
  startedAt?: number;
  endedAt?: number;
  /** The input message of the run. */
  message: string;
  /** Deliver the final reply to the session's channel. */
  deliver: boolean;
  spawnedBy?: string;
  extraSystemPrompt?: string;
  timeoutMs?: number;
  /** How many times the run was started (restart recovery bounds it). */
  attempts: number;
  reply?: string;
  error?: string;
  usage?: TokenUsage;
  costUsd?: number;
  provenance?: MessageProvenance;
  announce?: AnnounceOutcome;
  meta?: Record<string, unknown>;
}

/** States of an announce outbox row. `parked`: the requester is gone; kept in its owner's inbox. */
export type OutboxStatus = 'pending' | 'delivered' | 'skipped' | 'parked';

/**
 * A durable announce: written in the same transaction that ends a child run, keyed by
 * `(childSessionKey, runId)`, delivered at least once and recorded so nothing re-sends.
 */
export interface OutboxEntry {
  childSessionKey: string;
  runId: string;
  requesterSessionKey: string;
  status: OutboxStatus;
  /** The announce as JSON (owned by the runtime). */
  payload: Record<string, unknown>;
  attempts: number;
  /** Epoch ms before which no delivery is attempted (backoff). */
  nextAttemptAt: number;
  createdAt: number;
  updatedAt: number;
  /** Set once the announce is in the requester's inbox. */
  inboxAt?: number;
  /** Set at once after the platform send succeeded; never sent again after. */
  platformMessageId?: string;
  deliveredAt?: number;
  lastError?: string;
}

/** A message waiting in a session's inbox for its next turn. `(sessionKey, id)` is unique. */
export interface InboxEntry {
  sessionKey: string;
  /** Idempotency key, e.g. `announce:<childSessionKey>:<runId>`. */
  id: string;
  message: TranscriptMessage;
  createdAt: number;
  consumedAt?: number;
}

/** A thread or topic bound to a session. */
export interface ThreadBinding {
  channel: string;
  accountId: string;
  /** The chat that holds the thread. */
  conversationId: string;
  /**
   * The key of the binding within its channel and account (what `threadBindingKey` returns): the
   * platform thread id, or `<conversationId>:<thread id>` for channels whose thread ids repeat
   * across chats (`capabilities.threadScope: 'chat'`, Telegram topics).
   */
  threadId: string;
  sessionKey: string;
  createdAt: number;
  lastActiveAt: number;
  /** Idle expiry in epoch ms, if any. */
  expiresAt?: number;
}

/** `pending`: a code was issued and awaits the owner; `approved`: the peer may DM the bot. */
export type PairingStatus = 'pending' | 'approved';

/**
 * Who may write to a bot in direct chats when its channel uses `dmPolicy: 'pairing'`. One row
 * per `(channel, accountId, peerId)`: a newcomer gets a pending code, and the owner's approval
 * (`colloquy pairing approve <channel> <code>`) turns the same row into an approval.
 */
export interface PairingRecord {
  /** Channel plugin id, e.g. `telegram`. */
  channel: string;
  /** The bot account the peer wrote to. */
  accountId: string;
  /** The platform's stable id of the person (user id, phone number, ...). */
  peerId: string;
  status: PairingStatus;
  /** The one-time code while pending (unique among a channel's pending rows). */
  code?: string;
  /** Epoch ms the code was issued. */
  createdAt: number;
  /** Epoch ms after which a pending code approves nobody. */
  expiresAt?: number;
  /** Epoch ms the peer was last told the code. */
  notifiedAt?: number;
  /** Epoch ms of the approval. */
  approvedAt?: number;
  /** A human name for listings. */
  displayName?: string;
  /** Platform extras (username, JID, ...), JSON-serialisable. */
  meta?: Record<string, unknown>;
}
