import type {
  AgentTool,
  ChannelCommand,
  ChannelPlugin,
  ColloquyConfig,
  InboundMessage,
  Logger,
  SessionRecord,
} from '@colloquy/core';
import type { RunRecord } from '@colloquy/core/gateway';
import type { ModelProvider } from '@colloquy/core/model';
import type { Store } from '@colloquy/core/store';
import type { ClusterAdapter } from '../cluster/cluster-adapter.js';
import type { RuntimeGateway } from '../gateway/runtime-gateway.js';
import type { McpToolSource } from '../mcp/client/mcp-tool-source.js';
import type { ChatProgressOptions } from '../progress/chat-progress.js';
import type { SubagentRuntimeOptions } from '../subagents/subagent-registry.js';
import type { RuntimeTelemetryOptions } from '../telemetry/telemetry.js';

/** The runtime's clock. Tests inject a fake one. */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
}

/** A model reference resolved to a provider and the provider's own model id. */
export interface ResolvedModel {
  /** The provider that serves the model. */
  provider: ModelProvider;
  /** The id the provider expects, e.g. `gpt-4o-mini` for `openai/gpt-4o-mini`. */
  modelId: string;
}

/** A model router (what `createModelRouter` returns): a provider per `provider/model` reference. */
export interface ModelRouterLike {
  /** True when `modelRef` is well formed and its provider is known. */
  has(modelRef: string): boolean;
  /** The provider serving a `provider/model` reference; throws for an unknown provider. */
  providerFor(modelRef: string): ModelProvider;
}

/**
 * Resolves a `provider/model` reference: a function, a map keyed by the full reference, or a
 * model router (`createModelRouter`). `undefined` (or `has() === false`) means "unknown model".
 */
export type ModelResolver =
  | ((modelRef: string) => ResolvedModel | undefined)
  | ReadonlyMap<string, ResolvedModel>
  | ModelRouterLike;

/** What the {@link ToolsHook} gets for each run. */
export interface ToolsHookContext {
  /** The session as it is when the run starts. */
  session: SessionRecord;
  /** The run (the leader of the turn, when several messages were folded into it). */
  run: RunRecord;
  /** The in-process gateway (what the session tools call). */
  gateway: RuntimeGateway;
  /** The resolved configuration. */
  config: ColloquyConfig;
  /** The runtime clock. */
  now(): number;
  /** Hands background work started by a tool to the runtime, which waits for it on shutdown. */
  track(work: Promise<void>): void;
}

/** Supplies the tools of one run (e.g. the session tools for main, group and dm sessions). */
export type ToolsHook = (ctx: ToolsHookContext) => readonly AgentTool[];

/**
 * Slash commands, checked before an addressed message becomes a run, in two steps: `matches` picks
 * the messages that are commands, and `answer` answers them (the model is not run).
 *
 * @example
 * ```ts
 * const commands: CommandsHook = {
 *   matches: (inbound) => inbound.text.trim() === '/ping',
 *   answer: async () => 'pong',
 * };
 * ```
 */
export interface CommandsHook {
  /**
   * True when `answer` should take this message. It runs for every addressed message before anything
   * is stored, so it must be cheap and have no side effects: `session` is the session as this message
   * leaves it, not stored yet (a first message's session does not exist in the store). A message it
   * declines costs no store write beyond the run's own.
   */
  matches(inbound: InboundMessage, session: SessionRecord): boolean;
  /**
   * Answers a matched message. The session is stored first, so the tools and store reads of the
   * answer see it. Returns the reply text, or `undefined` to hand the message to the model after all.
   */
  answer(inbound: InboundMessage, session: SessionRecord): Promise<string | undefined>;
}

/** Options of `createRuntime`. */
export interface RuntimeOptions {
  /** The resolved config (`resolveConfig` from `@colloquy/core`). */
  config: ColloquyConfig;
  /** Durable state. The runtime closes it on shutdown. */
  store: Store;
  /** Channel plugins; `start()` starts each with its `ChannelContext`. Default none. */
  plugins?: readonly ChannelPlugin[];
  /**
   * Resolves `provider/model` references to providers. Default: `createModelRouter(config)`, the
   * AI SDK providers configured under `models.providers`.
   */
  models?: ModelResolver;
  /** Tools for each run. Default: `sessionToolsHook`, the session tools (compose it to add your own). */
  tools?: ToolsHook;
  /**
   * MCP tools (`createMcpToolSource`): each run also gets the tools its agent's
   * `agents.list[].tools.allow` allows, named `<server>__<tool>`; a sub-agent spawned by another
   * agent only those both agents allow. The runtime closes the source on shutdown. Default none.
   */
  mcp?: McpToolSource;
  /** Slash commands, checked before a message becomes a run. */
  commands?: CommandsHook;
  /** The slash commands advertised to plugins (`ChannelContext.commands`). Default none. */
  commandList?: readonly ChannelCommand[];
  /** True when the sender of `inbound` is the owner (allowed to use `/send on|off|inherit`). Default: nobody. */
  isOwner?: (inbound: InboundMessage) => boolean;
  /** Structured logger (pino fits). Default: silent. */
  logger?: Logger;
  /**
   * The clock for timestamps and stored deadlines. Default: the wall clock, never running backward
   * (a wall clock set back is absorbed, see the README's "Clock jumps").
   */
  clock?: Clock;
  /**
   * Serve the gateway over WebSocket on `config.gateway.host`/`port` with `config.gateway.token`
   * from `start()` until `shutdown()`. Default false.
   */
  serve?: boolean;
  /** How often the typing indicator is refreshed while a run is active. Default 4000 ms. */
  typingIntervalMs?: number;
  /**
   * How long a run is active before the first typing indicator is shown: a reply that comes sooner
   * costs no platform call (and none of the platform's rate limit). Default 0: at once.
   */
  typingDelayMs?: number;
  /**
   * Sub-agent progress in the requester's chat: typing while its helpers run and, on channels
   * with `capabilities.edits`, one status line edited in place and finalised when the last helper
   * ends. Turned off per channel with `channels.<id>.progress: false` in the config. Default:
   * shown after 2000 ms of work, edited at most every 5000 ms.
   */
  progress?: ChatProgressOptions;
  /** Start a wake run when a session goes idle with unread inbox entries. Default true. */
  autoWake?: boolean;
  /**
   * The root of session workspaces, where sub-agent attachments are written
   * (`<root>/<agentId>/<session>/.colloquy/attachments/<uuid>/`). Default: `workspaces/` beside the
   * SQLite file, else `<tmpdir>/colloquy-workspaces`.
   */
  workspaceDir?: string;
  /** Tuning of sub-agent announce delivery (retry backoff, poll) and the archive sweep. */
  subagents?: SubagentRuntimeOptions;
  /**
   * Share runs with other instances on one database (`createPostgresCluster` from
   * `@colloquy/cluster`). Default none: runs wait in this process's queue, and `start()` recovers
   * what the previous process left.
   */
  cluster?: ClusterAdapter;
  /**
   * OpenTelemetry traces and metrics: content recording and the trace layout of spawn trees. The
   * runtime uses `@opentelemetry/api` only: spans and metrics reach the SDK the application
   * registers, and cost nothing without one. Default: no content, one trace per spawn tree.
   */
  telemetry?: RuntimeTelemetryOptions;
}
