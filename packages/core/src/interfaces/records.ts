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
  /** Prompt tokens the model read, summed over the calls counted. */
  inputTokens: number;
  /** Tokens the model generated, summed over the calls counted. */
  outputTokens: number;
  /** `inputTokens + outputTokens` as reported by the provider. */
  totalTokens: number;
  /** Absent until a model call reported it. */
  contextTokens?: number;
}

/** The requester's origin, captured when a sub-agent is spawned, so its announce finds its way home. */
export interface SessionOrigin {
  /** The requester's internal session key. */
  sessionKey: string;
  /** Channel plugin id of the requester's chat, when it had one. */
  channel?: string;
  /** The platform chat id of the requester's chat. */
  to?: string;
  /** The bot account the requester's chat belongs to. */
  accountId?: string;
  /** The thread or topic inside `to`, when the request came from one. */
  threadId?: string;
}

/** One session: its key, metadata and policy overrides. The transcript is stored separately. */
export interface SessionRecord {
  /** The normalised internal key, e.g. `agent:main:main` or `agent:main:telegram:group:-100123`. */
  key: string;
  /** A stable opaque id (UUID). A new id means a fresh transcript (`/new`). */
  sessionId: string;
  /** The id of the agent (from config) that owns the session. */
  agentId: string;
  /** Derived from `key` when the session is created. */
  kind: SessionKind;
  /** Epoch milliseconds. */
  createdAt: number;
  /** Epoch milliseconds of the last activity; lists sort on it, newest first. */
  updatedAt: number;
  /** The channel recorded on the session (groups). */
  channel?: string;
  /** The type of the chat the session serves, when it came from a channel. */
  chatType?: ChatType;
  /**
   * A human label set by `sessions_spawn` or `sessions.patch`; tools can address the session by it.
   */
  label?: string;
  /** A human name for listings (e.g. the chat title). */
  displayName?: string;
  /** Where the session's replies go; absent for sessions without a chat (e.g. `main`, sub-agents). */
  deliveryContext?: DeliveryContext;
  /** Channel plugin id of the last inbound message (or bound thread). */
  lastChannel?: string;
  /** The platform chat id of the last inbound message. */
  lastTo?: string;
  /** The bot account of the last inbound message. */
  lastAccountId?: string;
  /** A per-session model override (`provider/model`); absent means the agent's configured model. */
  model?: string;
  /** A per-session thinking level override: `off`, `minimal`, `low`, `medium` or `high`. */
  thinkingLevel?: string;
  /** A per-session verbosity override: `off`, `on` or `full`. */
  verboseLevel?: string;
  /** True once a run of the session has completed (`done`). */
  systemSent?: boolean;
  /** True when the last run ended `killed` or `timeout`. */
  abortedLastRun?: boolean;
  /** Overrides the configured send-policy rules for this session. */
  sendPolicy?: SendPolicyOverride;
  /** True when the session's agent runs sandboxed (clamps session-tool visibility). */
  sandboxed?: boolean;
  /** The internal key of the session that spawned this one. */
  spawnedBy?: string;
  /** 0 for top-level sessions, parent depth + 1 for spawned ones. */
  spawnDepth?: number;
  /**
   * True when the transcript was seeded with the recent history of the session that spawned it
   * (`sessions_spawn` with `context: "fork"`). The guard then lets only callers that may read that
   * session reach this one (see `SessionAccessInput.targetInheritsFrom`).
   */
  forked?: boolean;
  /** For spawned sessions: where the requester was, so the announce can reach it. */
  requesterOrigin?: SessionOrigin;
  /** Token counters accumulated over the session's runs. */
  usage?: TokenUsage;
  /** Accumulated model cost in US dollars, when the provider prices its calls. */
  estimatedCostUsd?: number;
  /** The state of the session's latest run; absent before its first run. */
  status?: SessionStatus;
  /** Epoch milliseconds the latest run started. */
  startedAt?: number;
  /** Epoch milliseconds the latest run ended; absent while running. */
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
  /**
   * `inter_session`: sent by another session; `announce`: a sub-agent's result; `system`: written by
   * Colloquy.
   */
  kind: 'inter_session' | 'announce' | 'system';
  /** The internal key of the session it came from. */
  sourceSessionKey?: string;
  /** The tool that produced it, e.g. `sessions_send`. */
  sourceTool?: string;
  /** The run of the source session that produced it. */
  sourceRunId?: string;
  /** Inter-session hop counter; chains longer than `session.agentToAgent.maxHops` are refused. */
  hop?: number;
}

/** A file or media item attached to an inbound message. */
export interface MediaAttachment {
  /** The kind of media, as the platform reports it. */
  kind: 'image' | 'document' | 'audio' | 'voice' | 'video' | 'sticker';
  /** The MIME type, when the platform gives one. */
  mimeType?: string;
  /** The original file name, when the platform gives one. */
  fileName?: string;
  /** Size in bytes, when known. */
  size?: number;
  /** A platform reference (file id or URL) that the plugin can resolve later. */
  ref?: string;
  /** The caption sent with the media. */
  caption?: string;
  /** Duration in seconds for audio/voice/video. */
  durationSeconds?: number;
}

/** Transcript roles. */
export type MessageRole = 'user' | 'assistant' | 'toolResult' | 'system';

/** A transcript message as written by the runtime. */
export interface TranscriptMessage {
  /** Who wrote the message. */
  role: MessageRole;
  /** Plain text, or content blocks (text, thinking, images, tool calls). */
  content: string | ContentBlock[];
  /** Epoch milliseconds. */
  timestamp: number;
  /** The run that wrote the message (assistant and tool messages, run inputs). */
  runId?: string;
  /** For `toolResult` messages: the id of the tool call answered. */
  toolCallId?: string;
  /** For `toolResult` messages: the tool that answered. */
  toolName?: string;
  /** For `toolResult` messages: true when the tool failed. */
  isError?: boolean;
  /** Absent for messages typed by the session's own human or written by its own model. */
  provenance?: MessageProvenance;
  /** The platform sender of an inbound message (id and display name). */
  sender?: { id: string; name?: string };
  /** Media attached to an inbound message. */
  media?: MediaAttachment[];
  /** Platform message id once delivered. */
  platformMessageId?: string;
  /** For assistant messages: the tokens the model call used. */
  usage?: TokenUsage;
  /** For assistant messages: the cost of the model call in US dollars, when priced. */
  cost?: number;
  /** Structured extras for the runtime and tools (JSON-serialisable), e.g. a tool result's data. */
  details?: Record<string, unknown>;
}

/** A transcript message as stored: `seq` is assigned by the Store, strictly increasing per session. */
export interface StoredMessage extends TranscriptMessage {
  /** Position in the session's transcript, starting at 1. */
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
  /** `delivered` to the requester, `skipped` on purpose, `denied` by policy, or `failed`. */
  outcome: 'delivered' | 'skipped' | 'denied' | 'failed';
  /** A human sentence explaining the outcome. */
  reason?: string;
  /** Epoch milliseconds the outcome was recorded. */
  at: number;
}

/** One agent run: a queued or executing turn of a session. */
export interface RunRecord {
  /** A unique id (UUID). */
  runId: string;
  /** The internal key of the session the run belongs to. */
  sessionKey: string;
  /** The command-queue lane the run waits in. */
  lane: Lane;
  /** The run's state. */
  status: RunStatus;
  /** Epoch milliseconds the run was queued. */
  createdAt: number;
  /** Epoch milliseconds of the last change to the record. */
  updatedAt: number;
  /** Epoch milliseconds the run started executing; absent while queued. */
  startedAt?: number;
  /** Epoch milliseconds the run reached a terminal status. */
  endedAt?: number;
  /** The input message of the run. */
  message: string;
  /** Deliver the final reply to the session's channel. */
  deliver: boolean;
  /** The internal key of the session that spawned the run's session, for sub-agent runs. */
  spawnedBy?: string;
  /** Text appended to the system prompt for this run. */
  extraSystemPrompt?: string;
  /** Wall-clock limit of the run in milliseconds; absent means the configured default. */
  timeoutMs?: number;
  /** How many times the run was started (restart recovery bounds it). */
  attempts: number;
  /** The final assistant text, once the run is `done`. */
  reply?: string;
  /** The failure message, for runs that ended `error`, `timeout`, `killed` or `interrupted`. */
  error?: string;
  /** Tokens the run's model calls used; when several runs share one turn, only its leader has it. */
  usage?: TokenUsage;
  /** The cost of the run's model calls in US dollars, when priced; on the turn's leader run only. */
  costUsd?: number;
  /** Where the run's input message came from, when not from the session's own human. */
  provenance?: MessageProvenance;
  /** For sub-agent runs: how the announce to the requester ended. */
  announce?: AnnounceOutcome;
  /** Free-form metadata owned by the runtime (JSON-serialisable). */
  meta?: Record<string, unknown>;
}

/** States of an announce outbox row. `parked`: the requester is gone; kept in its owner's inbox. */
export type OutboxStatus = 'pending' | 'delivered' | 'skipped' | 'parked';

/**
 * A durable announce: written in the same transaction that ends a child run, keyed by
 * `(childSessionKey, runId)`, delivered at least once and recorded so nothing re-sends.
 */
export interface OutboxEntry {
  /** The sub-agent session whose run ended. */
  childSessionKey: string;
  /** The child run being announced. */
  runId: string;
  /** The session the announce goes to. */
  requesterSessionKey: string;
  /** The delivery state. */
  status: OutboxStatus;
  /** The announce as JSON (owned by the runtime). */
  payload: Record<string, unknown>;
  /** How many deliveries were attempted. */
  attempts: number;
  /** Epoch ms before which no delivery is attempted (backoff). */
  nextAttemptAt: number;
  /** Epoch milliseconds the row was written. */
  createdAt: number;
  /** Epoch milliseconds of the last change to the row. */
  updatedAt: number;
  /** Set once the announce is in the requester's inbox. */
  inboxAt?: number;
  /** Set at once after the platform send succeeded; never sent again after. */
  platformMessageId?: string;
  /** Epoch milliseconds the row became `delivered`. */
  deliveredAt?: number;
  /** The error of the last failed attempt. */
  lastError?: string;
}

/** A message waiting in a session's inbox for its next turn. `(sessionKey, id)` is unique. */
export interface InboxEntry {
  /** The session whose inbox holds the message. */
  sessionKey: string;
  /** Idempotency key, e.g. `announce:<childSessionKey>:<runId>`. */
  id: string;
  /** The message, appended to the transcript when consumed. */
  message: TranscriptMessage;
  /** Epoch milliseconds the message was queued. */
  createdAt: number;
  /** Epoch milliseconds a turn took it; absent while waiting. */
  consumedAt?: number;
}

/** A thread or topic bound to a session. */
export interface ThreadBinding {
  /** Channel plugin id. */
  channel: string;
  /** The bot account within the channel. */
  accountId: string;
  /** The chat that holds the thread. */
  conversationId: string;
  /**
   * The key of the binding within its channel and account (what `threadBindingKey` returns): the
   * platform thread id, or `<conversationId>:<thread id>` for channels whose thread ids repeat
   * across chats (`capabilities.threadScope: 'chat'`, Telegram topics).
   */
  threadId: string;
  /** The internal key of the bound session. */
  sessionKey: string;
  /** Epoch milliseconds the binding was made. */
  createdAt: number;
  /** Epoch milliseconds of the last activity through the binding. */
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
  /** Pending code or approval. */
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

/** What an MCP access token lets its client do: `read` (list, history, status, search, agents), `send` (`sessions_send`), `spawn` (`sessions_spawn`, `subagents` steer and kill). */
export type McpScope = 'read' | 'send' | 'spawn';

/**
 * An owner-issued access token for Colloquy's MCP server (`colloquy mcp token create`). The store
 * keeps only the SHA-256 of the token, never the token itself. The client it admits acts as the
 * session `agent:<agentId>:mcp:<name>`.
 */
export interface McpTokenRecord {
  /** A stable opaque id (UUID) the CLI can revoke by. */
  id: string;
  /** The client's name: the last part of its session key (`[a-z0-9][a-z0-9_-]*`). */
  name: string;
  /** The agent whose sessions the client works with. */
  agentId: string;
  /** Hex SHA-256 of the token (unique). */
  hash: string;
  /** What the token may do. */
  scopes: McpScope[];
  /** How far the client sees: `self`, `tree`, `agent` or `all` (never wider than `tools.sessions.visibility` at use time). */
  visibility: 'self' | 'tree' | 'agent' | 'all';
  /** Epoch ms the token was created. */
  createdAt: number;
  /** Epoch ms the token was revoked; a revoked token admits nobody. */
  revokedAt?: number;
}
