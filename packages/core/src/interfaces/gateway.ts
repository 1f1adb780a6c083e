import type {
  AnnounceOutcome,
  DeliveryContext,
  InboxEntry,
  Lane,
  MessageProvenance,
  RunStatus,
  SendPolicyOverride,
  SessionKind,
  SessionOrigin,
  SessionRecord,
  SessionStatus,
  StoredMessage,
  TokenUsage,
} from './records.js';
import type { SessionChanges } from './store.js';

/** Parameters of `sessions.list`. Visibility is applied by the caller (the tools), not here. */
export interface SessionsListParams {
  /** Only these kinds. Empty or absent: all kinds. */
  kinds?: SessionKind[];
  /** Only sessions updated within this many minutes. */
  activeMinutes?: number;
  /**
   * Only direct children of this session key, or of any of these keys (an empty list matches
   * nothing): one call lists a whole level of a spawn tree.
   */
  spawnedBy?: string | string[];
  /** Only sessions of these agents. */
  agentIds?: string[];
  /** Only these exact internal keys. */
  keys?: string[];
  /**
   * Also the sessions with these exact internal keys, whatever `keys` and `agentIds` say (the other
   * filters still apply). No effect when neither `keys` nor `agentIds` is given.
   */
  alsoKeys?: string[];
  /** Only sessions seeded with forked history (`SessionRecord.forked`), when true. */
  onlyForked?: boolean;
  /** Include archived sessions (default false). */
  includeArchived?: boolean;
  /** At most this many rows (default: no limit). */
  limit?: number;
  /** Skip this many rows (after sorting, before `limit`); default 0. */
  offset?: number;
  /** Also return each listed session's latest run in `latestRuns` (default false). */
  withLatestRun?: boolean;
}

/**
 * Parameters of `sessions.search`: full-text search over transcripts (every word must occur).
 * Like `sessions.list`, it applies no visibility: the caller scopes it with `keys` / `agentIds`.
 */
export interface SessionsSearchParams {
  /** The words to find (at least one letter or digit). */
  query: string;
  /** Only sessions of these kinds. Empty or absent: all kinds. */
  kinds?: SessionKind[];
  /** Only these exact internal keys. */
  keys?: string[];
  /** Only sessions of these agents. */
  agentIds?: string[];
  /**
   * Also the sessions with these exact internal keys, whatever `keys` and `agentIds` say (the other
   * filters still apply). No effect when neither `keys` nor `agentIds` is given.
   */
  alsoKeys?: string[];
  /** Most hits (default 10, at most 50); 0 only counts. */
  limit?: number;
  /** Skip this many hits first (default 0). */
  offset?: number;
}

/** Result of `sessions.search`: hits best first, messages as stored, and how many matched. */
export interface SessionsSearchResult {
  /** The page of hits selected by `limit` and `offset`, each with its session key. */
  hits: Array<{ sessionKey: string; message: StoredMessage }>;
  /** How many messages matched, ignoring `limit` and `offset`. */
  total: number;
}

/** The latest run of a session, as `sessions.list` returns it with `withLatestRun`. */
export interface RunSummary {
  /** The run's id. */
  runId: string;
  /** The run's state. */
  status: RunStatus;
  /** The command-queue lane of the run. */
  lane: Lane;
  /** Epoch milliseconds the run was queued. */
  createdAt: number;
  /** Epoch milliseconds the run started executing; absent while queued. */
  startedAt?: number;
  /** Epoch milliseconds the run ended; absent until it is terminal. */
  endedAt?: number;
  /** Tokens the run's model calls used. */
  usage?: TokenUsage;
  /** The run's model cost in US dollars, when priced. */
  costUsd?: number;
  /** The failure message of a run that did not end `done`. */
  error?: string;
}

/** Result of `sessions.list`: rows (newest first) and how many matched before `limit`. */
export interface SessionsListResult {
  /** The page of sessions, newest `updatedAt` first. */
  sessions: SessionRecord[];
  /** How many sessions matched, ignoring `limit` and `offset`. */
  total: number;
  /** Best-effort transcript locators by session key (see `Store.transcriptLocator`). */
  transcriptLocators?: Record<string, string>;
  /** The latest run of each listed session that has one, by key (only with `withLatestRun`). */
  latestRuns?: Record<string, RunSummary>;
}

/** Parameters of `sessions.tree`: the spawn tree below one session. */
export interface SessionsTreeParams {
  /** The root: an internal key in any spelling, or an alias of one (e.g. `main`). */
  key: string;
  /** The most sessions returned, the root included (default and at most 1,000). */
  maxNodes?: number;
  /** The most runs returned per session, the newest (default 20, at most 100). */
  runsPerNode?: number;
}

/** Result of `sessions.tree`: the root first, then its descendants breadth first, oldest spawn first. */
export interface SessionsTreeResult {
  /** The internal key of the root. */
  rootKey: string;
  /** The sessions of the tree (at most `maxNodes`). */
  nodes: SpawnTreeNode[];
  /** True when the tree has more sessions than `maxNodes`: the deepest and newest are left out. */
  truncated: boolean;
  /** Epoch ms the snapshot was taken: what the durations of unfinished runs are counted to. */
  now: number;
}

/** One session of a spawn tree. */
export interface SpawnTreeNode {
  /** The session's internal key. */
  sessionKey: string;
  /** The key of the session that spawned it; absent on the root. */
  parentKey?: string;
  /** 0 for the root, 1 for its children, and so on. */
  depth: number;
  /** The session's agent. */
  agentId: string;
  /** The session's label, when it has one (sub-agents get theirs from `sessions_spawn`). */
  label?: string;
  /** The session's kind. */
  kind: SessionKind;
  /** The state of the session's latest run (`idle` before any). */
  status: SessionStatus;
  /** The session's newest runs (at most `runsPerNode`), oldest first. */
  runs: SpawnTreeRun[];
  /** True when the session has older runs than those in `runs`. */
  olderRuns: boolean;
}

/**
 * One run of a spawn tree session: its summary (the `error` with secrets redacted as in history),
 * its duration, the tool calls it made and its announce.
 */
export interface SpawnTreeRun extends RunSummary {
  /** Milliseconds from start to end, or to the snapshot's `now` while it runs; absent while queued. */
  durationMs?: number;
  /** The tool calls of the run, in the order they were made (from the session's recent transcript). */
  toolCalls: SpawnTreeToolCall[];
  /** For a sub-agent run that ended: how its result reached the spawning session. */
  announce?: SpawnTreeAnnounce;
}

/** One tool call inside a run. */
export interface SpawnTreeToolCall {
  /** The call's id. */
  toolCallId: string;
  /** The tool's name. */
  name: string;
  /** Epoch ms the model asked for the call (the call before it ended, or the model step ended). */
  startedAt: number;
  /** Epoch ms the tool's result was recorded; absent while it runs or when the run ended first. */
  endedAt?: number;
  /** `ok` or `error` by its result; `running` while its run runs; `unfinished` when the run ended first. */
  outcome: 'ok' | 'error' | 'running' | 'unfinished';
}

/** The announce of a sub-agent run: its result, sent back to the session that spawned it. */
export interface SpawnTreeAnnounce {
  /** The internal key of the session the announce goes to. */
  to: string;
  /**
   * `pending` until it is settled; `delivered` to the requester; `skipped` on purpose; `denied` by
   * send policy; `failed` when it could not be delivered (also when its requester is gone).
   */
  state: 'pending' | 'delivered' | 'skipped' | 'denied' | 'failed';
  /** Epoch ms of the state: when it was settled, or when the pending announce was written. */
  at: number;
}

/**
 * Parameters of `sessions.resolve`: exactly one of `key`, `sessionId` or `label`.
 * `agentId` is the requester's agent: it resolves the `main` alias and scopes label look-ups.
 */
export interface SessionsResolveParams {
  /** An internal key or an alias of one (e.g. `main`). */
  key?: string;
  /** A session's `sessionId`. */
  sessionId?: string;
  /** A session's label, among the sessions of `agentId`. */
  label?: string;
  /** The requester's agent id. */
  agentId?: string;
}

/** Fields `sessions.patch` may change; `null` clears. */
export interface SessionsPatchFields {
  /** A human label the tools can address the session by. */
  label?: string | null;
  /** A human name for listings. */
  displayName?: string | null;
  /** A model override as `provider/model`. */
  model?: string | null;
  /** `off`, `minimal`, `low`, `medium` or `high`. */
  thinkingLevel?: string | null;
  /** `off`, `on` or `full`. */
  verboseLevel?: string | null;
  /** Overrides the configured send-policy rules for the session. */
  sendPolicy?: SendPolicyOverride | null;
}

/** The outcome of any outbound delivery. Refusals and failures are values, not exceptions. */
export type DeliveryOutcome =
  | { status: 'delivered'; messageId: string; messageIds: string[] }
  | { status: 'denied'; reason: string }
  | { status: 'skipped'; reason: string }
  | {
      status: 'failed';
      error: string;
      code?: string;
      /**
       * The platform could not take the message for now (a 5xx, a rate limit, a refused or reset
       * connection, a timeout): sending it again later may succeed. Absent: the failure is final.
       */
      retryable?: boolean;
      /** With `retryable`: the platform asked to wait this long before the next try. */
      retryAfterMs?: number;
    };

/** Parameters of `agent`: enqueue a run. Returns at once with its `runId`. */
export interface AgentRunParams {
  /** The internal key of the session to run. */
  sessionKey: string;
  /** The run's input message; it becomes a `user` message of the transcript. */
  message: string;
  /** Default `main`. */
  lane?: Lane;
  /** Deliver the final reply to the session's channel (default true for channel sessions). */
  deliver?: boolean;
  /** The internal key of the requesting session, for sub-agent runs. */
  spawnedBy?: string;
  /** Text appended to the system prompt for this run. */
  extraSystemPrompt?: string;
  /** 0 or absent: no timeout. */
  timeoutSeconds?: number;
  /** Where the message came from, when not from the session's own human. */
  provenance?: MessageProvenance;
  /** A caller-chosen key: a second `agent` call with the same key returns the first run. */
  idempotencyKey?: string;
  /**
   * Creates the session when `sessionKey` does not exist yet (sub-agent spawns), with these fields.
   * Without it, `agent` on an unknown key fails with `SESSION_NOT_FOUND` (the agent's main key excepted).
   */
  session?: AgentSessionInit;
  /**
   * The key of a session that watches this one from before this run's input on: when this session
   * next changes and is at rest again, the watcher's inbox gets one notice (see `SessionWatch`).
   * Stored in the enqueue transaction; the watcher must exist. Not with `steer`.
   */
  watchBy?: string;
  /**
   * A W3C trace context (`traceparent`, e.g. from an MCP request's `params._meta`), kept on the run
   * as `meta.traceparent` (and `meta.tracestate`) so the run can be joined to the caller's trace.
   * A value that is not a valid `traceparent` is an `INVALID_ARGUMENT`.
   */
  traceparent?: string;
  /** The `tracestate` that came with {@link AgentRunParams.traceparent}. */
  tracestate?: string;
  /**
   * Steer a session that has an active (queued or running) run instead of queuing a new one: the
   * message is taken by the running turn before its next model step, or by its next turn. The
   * result carries the active run's id. Fails with `CONFLICT` when nothing is active.
   */
  steer?: boolean;
}

/** One file handed to a sub-agent (see {@link AgentSessionInit.attachments}). */
export interface SpawnAttachment {
  /** A plain file name: no path separators, no `..`, no control characters. */
  name: string;
  /** The file content: text (`utf8`, the default) or strict base64 (`base64`). */
  content: string;
  /** How `content` is encoded (default `utf8`). */
  encoding?: 'utf8' | 'base64';
  /** The MIME type recorded in the manifest. */
  mimeType?: string;
}

/** One written attachment, as receipts and manifests list it. */
export interface AttachmentFileReceipt {
  /** The file name inside the attachments folder. */
  name: string;
  /** Decoded size in bytes. */
  bytes: number;
  /** Hex SHA-256 of the decoded bytes. */
  sha256: string;
  /** The MIME type given with the file. */
  mimeType?: string;
}

/** Where a sub-agent's attachments were written, and what. */
export interface AttachmentReceipt {
  /** The folder as the child sees it (`attachAs.mountPath` when given). */
  dir: string;
  /** The `manifest.json` file name inside `dir`. */
  manifest: string;
  /** Every file written, in the order given. */
  files: AttachmentFileReceipt[];
  /** The decoded size of all files, in bytes. */
  totalBytes: number;
}

/** Result of `agent`. */
export interface AgentRunResult {
  /** The id of the queued run (with `steer`: the active run that takes the message). */
  runId: string;
  /** The internal key of the session the run belongs to. */
  sessionKey: string;
  /** The run's state when the call returned. */
  status: RunStatus;
  /** With {@link AgentSessionInit.attachments}: what was written. */
  attachments?: AttachmentReceipt;
  /** With {@link AgentSessionInit.thread}: the thread the new session is bound to. */
  thread?: DeliveryContext & { threadId: string };
  /** With {@link AgentRunParams.watchBy}: the watch counts changes after this `stateVersion`. */
  watching?: { sinceVersion: number };
}

/** The fields of a session created by `agent` (see {@link AgentRunParams.session}). */
export interface AgentSessionInit {
  /** A human label the tools can address the session by. */
  label?: string;
  /** A human name for listings. */
  displayName?: string;
  /** `provider/model`; an unknown model fails with `INVALID_ARGUMENT`. */
  model?: string;
  /** `off`, `minimal`, `low`, `medium` or `high`. */
  thinkingLevel?: string;
  /** Run the session sandboxed (clamps its session-tool visibility). */
  sandboxed?: boolean;
  /** Default: the `spawnedBy` session's depth + 1, else 0. */
  spawnDepth?: number;
  /** Default: taken from the `spawnedBy` session's delivery context. */
  requesterOrigin?: SessionOrigin;
  /** Free-form metadata stored on the session (JSON-serialisable). */
  meta?: Record<string, unknown>;
  /**
   * Create a thread (or forum topic) in the spawning session's chat and bind it to the new session
   * (needs a channel with `capabilities.threads`; else `NOT_SUPPORTED`). Default false.
   */
  thread?: boolean;
  /**
   * Files written to `<session workspace>/.colloquy/attachments/<uuid>/` with a `manifest.json`
   * before the run is queued. Needs `tools.sessions_spawn.attachments.enabled`; every limit is
   * checked before anything is written (`INVALID_ARGUMENT` / `FORBIDDEN`).
   */
  attachments?: SpawnAttachment[];
  /** How the child sees its attachments folder (e.g. a sandbox mount path). */
  attachAs?: { mountPath?: string };
  /**
   * The spawning session's recent history (`sessions_spawn` with `context: "fork"`): appended to the
   * new transcript before the task, marked `details.inherited: true`. Needs `spawnedBy`; at most 20
   * messages and 40 KiB; the runtime redacts it again.
   */
  inheritedHistory?: InheritedMessage[];
}

/** One message a forked sub-agent inherits (see {@link AgentSessionInit.inheritedHistory}). */
export interface InheritedMessage {
  /** Who wrote the message. */
  role: 'user' | 'assistant';
  /** The message text. */
  content: string;
  /** When it was first written (epoch ms). */
  timestamp?: number;
}

/** Result of `agent.wait`. `waitTimedOut` means the run is still going. */
export interface AgentWaitResult {
  /** The run waited for. */
  runId: string;
  /** The run's state when the wait ended. */
  status: RunStatus;
  /** True when `timeoutMs` passed before the run ended. */
  waitTimedOut: boolean;
  /** The final assistant text, once the run is `done`. */
  reply?: string;
  /** The failure message of a run that ended other than `done`. */
  error?: string;
  /** Tokens the run's model calls used. */
  usage?: TokenUsage;
}

/** One agent, as `agents.list` returns it. */
export interface AgentInfo {
  /** The agent id from config. */
  id: string;
  /** The agent's display name, when configured. */
  name?: string;
  /** Present on the default agent. */
  default?: true;
  /** The agent's configured model as `provider/model`. */
  model?: string;
}

/** Parameters of `session.status`. */
export interface SessionStatusParams {
  /** The internal key of the session. */
  key: string;
  /** Also count the changes after this `stateVersion` (an integer, at least 0), into `changes`. */
  changesSince?: number;
}

/** Result of `session.status`. */
export interface SessionStatusResult {
  /** The session record. */
  session: SessionRecord;
  /** The state of the session's latest run (`idle` before any). */
  status: SessionStatus;
  /** The session's `stateVersion` (0 when it never changed). */
  stateVersion: number;
  /** With `changesSince`: the changes after it, kinds and counts. */
  changes?: SessionChanges;
  /** How many runs of the session are queued, not counting the running one. */
  queueDepth: number;
  /** The id of the running run, if any. */
  activeRunId?: string;
  /** A best-effort locator of the transcript (see `Store.transcriptLocator`). */
  transcriptLocator?: string;
}

/** Parameters of `session.yield`: the session ends its turn and sleeps until something arrives. */
export interface SessionYieldParams {
  /** The internal key of the yielding session. */
  key: string;
  /** Why it waits, told back to the model when it wakes (at most 500 characters). */
  reason?: string;
  /** Wake after this many seconds even if nothing arrived (1..86400; default: no timeout). */
  timeoutSeconds?: number;
}

/** What a session yielding waits for, as stored on `session.meta.yield` until it wakes. */
export interface SessionYieldState {
  /** A fresh id per yield (the timeout wake carries it, so a stale timer wakes nothing). */
  id: string;
  /** Epoch ms of the yield. */
  at: number;
  /** Why it waits, as given in `session.yield`. */
  reason?: string;
  /** The timeout given in `session.yield`, in seconds. */
  timeoutSeconds?: number;
  /** Epoch ms of the timeout wake, when a timeout was given. */
  deadline?: number;
}

/** Result of `session.yield`: what was pending when the session yielded. */
export interface SessionYieldResult {
  /** The internal key of the yielding session. */
  sessionKey: string;
  /** The state stored on the session. */
  yielded: SessionYieldState;
  /** What the session can wake for. */
  pending: {
    /** Child runs still queued or running. */
    children: number;
    /** Child results written but not yet in the inbox. */
    results: number;
    /** Unread inbox entries. */
    inbox: number;
    /** Sessions this one watches (`sessions_send` with `watch: true`) that have not changed yet. */
    watches?: number;
  };
}

/**
 * The RPC surface of a Colloquy gateway: method name to `[params, result]`.
 * Served in-process and over WebSocket with exactly the same shapes.
 */
export interface GatewayMethods {
  /** Lists sessions, with no visibility filter. */
  'sessions.list': [SessionsListParams, SessionsListResult];
  /** Resolves a key, session id or label to one session; `SESSION_NOT_FOUND` when none. */
  'sessions.resolve': [SessionsResolveParams, { session: SessionRecord }];
  /** Changes a session's user-settable fields and returns the result. */
  'sessions.patch': [{ key: string; patch: SessionsPatchFields }, { session: SessionRecord }];
  /** Aborts a session's runs, then deletes it with its transcript; `deleted` is false when there was none. */
  'sessions.delete': [{ key: string }, { deleted: boolean }];
  /** Full-text search over transcripts, with no visibility filter. */
  'sessions.search': [SessionsSearchParams, SessionsSearchResult];
  /**
   * The spawn tree below a session, with each session's runs, their tool calls and announces: what
   * the owner panel and `colloquy tree` show. Like `sessions.list`, no visibility filter: it is for
   * the owner.
   * @throws `SESSION_NOT_FOUND` for an unknown root; `INVALID_ARGUMENT`
   */
  'sessions.tree': [SessionsTreeParams, SessionsTreeResult];
  /** `offset` skips the newest messages (after `beforeSeq`); `total` is the transcript's length. */
  'chat.history': [
    { key: string; limit?: number; beforeSeq?: number; offset?: number },
    { sessionKey: string; messages: StoredMessage[]; total: number },
  ];
  /** Sends `text` to the session's chat as the bot, and records it in the transcript once delivered. */
  'chat.send': [{ key: string; text: string; replyToMessageId?: string }, DeliveryOutcome];
  /** Queues a run (or steers the active one) and returns at once. */
  agent: [AgentRunParams, AgentRunResult];
  /** Waits up to `timeoutMs` milliseconds for a run to end. */
  'agent.wait': [{ runId: string; timeoutMs: number }, AgentWaitResult];
  /**
   * Aborts one run (`runId`) or every active run of a session (`sessionKey`); `aborted` lists the runs
   * aborted. With `sessionKey`, a yielded session's yield ends too: its wait is recorded as a run
   * ended `killed` (listed in `aborted`) when no run of it was active.
   */
  'agent.abort': [{ runId?: string; sessionKey?: string; reason?: string }, { aborted: string[] }];
  /** Records how the announce step of a run ended (delivered, skipped, denied, failed). */
  'agent.recordAnnounce': [{ runId: string; outcome: AnnounceOutcome }, { runId: string }];
  /** The configured agents. */
  'agents.list': [Record<string, never>, { agents: AgentInfo[] }];
  /** A session with its run state and queue depth. */
  'session.status': [SessionStatusParams, SessionStatusResult];
  /**
   * Marks the session as yielded (see {@link SessionYieldState}): its next turn starts when an
   * inbox entry or a message arrives, or at the timeout, and opens with a notice of why it woke.
   * @throws `CONFLICT` when nothing is pending (no running child, no unread inbox entry)
   */
  'session.yield': [SessionYieldParams, SessionYieldResult];
  /**
   * Opens the session an MCP client acts as (`agent:<agentId>:mcp:<name>`), creating it when it is
   * new. No model runs in it: what reaches its inbox waits for `mcp.events`.
   * @throws `INVALID_ARGUMENT` for an unknown agent or a bad name
   */
  'mcp.open': [{ agentId: string; name: string }, { session: SessionRecord; created: boolean }];
  /**
   * Takes the unread inbox entries of an MCP client's session (sub-agent announces, watch
   * notices), oldest first, waiting up to `timeoutMs` (at most 60 s) for the first one; taken
   * entries are appended to its transcript and consumed, so each is returned once.
   * @throws `FORBIDDEN` for a session that is not an MCP client's; `SESSION_NOT_FOUND`
   */
  'mcp.events': [{ sessionKey: string; timeoutMs?: number; limit?: number }, { entries: InboxEntry[] }];
  /**
   * Looks at the unread inbox entries of an MCP client's session without taking them (the
   * `colloquy://events` resource, and the stdio server's change notifications). With
   * `waitForChange`, waits up to `timeoutMs` (at most 60 s) until the newest unread entry is
   * another than `newestId`, so a watcher is woken once per new entry.
   * @throws `FORBIDDEN` for a session that is not an MCP client's; `SESSION_NOT_FOUND`
   */
  'mcp.pending': [McpPendingParams, McpPendingResult];
}

/** Params of the `mcp.pending` gateway method. */
export interface McpPendingParams {
  /** The MCP client's session (`agent:<agentId>:mcp:<name>`). */
  sessionKey: string;
  /** Wait until the newest unread entry is another than `newestId` (a new one arrived, or they were taken). */
  waitForChange?: boolean;
  /** With `waitForChange`: the `newestId` the caller saw last (absent: it saw none). */
  newestId?: string;
  /** How long to wait for a change, in ms (default 0: answer at once; at most 60,000). */
  timeoutMs?: number;
  /** Most entries returned, oldest first (default 20, at most 100). */
  limit?: number;
}

/** Result of the `mcp.pending` gateway method. */
export interface McpPendingResult {
  /** Unread entries, oldest first, at most `limit`; nothing is consumed. */
  entries: InboxEntry[];
  /** How many entries are unread in all. */
  count: number;
  /** The id of the newest unread entry, when there is one. */
  newestId?: string;
}

/** A gateway method name. */
export type GatewayMethod = keyof GatewayMethods;
/** The params type of a gateway method. */
export type GatewayParams<M extends GatewayMethod> = GatewayMethods[M][0];
/** The result type of a gateway method. */
export type GatewayResult<M extends GatewayMethod> = GatewayMethods[M][1];

/** Events pushed by a gateway (in-process listeners and WebSocket subscribers). */
export type GatewayEvent =
  | { type: 'run.queued'; runId: string; sessionKey: string; lane: Lane }
  | { type: 'run.started'; runId: string; sessionKey: string }
  | { type: 'run.delta'; runId: string; sessionKey: string; text: string }
  | { type: 'run.tool'; runId: string; sessionKey: string; toolName: string; toolCallId: string }
  | { type: 'run.ended'; runId: string; sessionKey: string; status: RunStatus; error?: string }
  | { type: 'session.updated'; sessionKey: string }
  | { type: 'session.deleted'; sessionKey: string }
  | { type: 'delivery'; sessionKey: string; to: DeliveryContext; outcome: DeliveryOutcome };

/**
 * The methods tools and clients call. Every method rejects with a `ColloquyError`
 * (e.g. `SESSION_NOT_FOUND`, `INVALID_ARGUMENT`, `RUN_NOT_FOUND`) on failure.
 *
 * @example
 * ```ts
 * const { sessions } = await gateway.call('sessions.list', { kinds: ['group'], limit: 20 });
 * ```
 */
export interface Gateway {
  /** Calls one gateway method. */
  call<M extends GatewayMethod>(method: M, params: GatewayParams<M>): Promise<GatewayResult<M>>;
  /** Subscribes to gateway events; returns the unsubscribe function. */
  subscribe?(listener: (event: GatewayEvent) => void): () => void;
}
