import type { ChannelPlugin, ColloquyConfig, Logger } from '@colloquy/core';
import type { Store, TurnOperations } from '@colloquy/core/store';
import type { HistoryCache } from '../agent/history-cache.js';
import type { ClusterAdapter } from '../cluster/cluster-adapter.js';
import type { Deliver } from '../delivery/deliver.js';
import type { DeliveryOutbox } from '../delivery/delivery-outbox.js';
import type { DeliveryRecorder } from '../delivery/delivery-recorder.js';
import type { EventBus } from '../gateway/event-bus.js';
import type { RunWaiters } from '../gateway/run-waiters.js';
import type { RuntimeGateway } from '../gateway/runtime-gateway.js';
import type { GroupContextWindow } from '../inbound/group-context.js';
import type { McpToolSource } from '../mcp/client/mcp-tool-source.js';
import type { CommandQueue } from '../queue/command-queue.js';
import type { QueuedRun } from '../queue/queued-run.js';
import type { SubagentRegistry } from '../subagents/subagent-registry.js';
import type { Telemetry } from '../telemetry/telemetry.js';
import type { Clock, CommandsHook, ModelResolver, ToolsHook } from './runtime-options.js';
import type { TurnEndHook } from './turn-end-hook-types.js';
import type { YieldTimers } from './yield-timers.js';

/** The runtime's internals, shared by its modules. Not part of the public API. */
export interface RuntimeContext {
  readonly config: ColloquyConfig;
  readonly store: Store;
  /** The store's turn operations (its own, or core's defaults). */
  readonly turns: TurnOperations;
  /** Records delivery outcomes in batches. */
  readonly deliveries: DeliveryRecorder;
  /** Messages owed to chats, sent in order per target and kept while their platform fails. */
  readonly outbox: DeliveryOutbox;
  readonly log: Logger;
  /** Spans and metrics (no-ops until the application registers an OpenTelemetry SDK). */
  readonly telemetry: Telemetry;
  readonly clock: Clock;
  readonly events: EventBus;
  readonly plugins: ReadonlyMap<string, ChannelPlugin>;
  readonly models: ModelResolver | undefined;
  readonly tools: ToolsHook | undefined;
  /** MCP tools of the agents, when configured. */
  readonly mcp: McpToolSource | undefined;
  /** Slash commands; gateway runs of the admin meet them too (see answerGatewayCommand). */
  readonly commands: CommandsHook | undefined;
  readonly deliver: Deliver;
  readonly queue: CommandQueue<QueuedRun>;
  /** Set when runs are shared with other instances (then `queue` runs only what this one took). */
  readonly cluster: ClusterAdapter | undefined;
  /** Resolves once the run has left this instance's queue (its batch settled, or it was removed). */
  whenDone(runId: string): Promise<void>;
  readonly waiters: RunWaiters;
  /** Prompt history, read from the store incrementally. */
  readonly history: HistoryCache;
  /** The in-process gateway (set once built). */
  gateway: RuntimeGateway;
  /** Sub-agent announces (outbox and delivery), steering and cleanup (set once built). */
  subagents: SubagentRegistry;
  /** Timeout wakes of yielded sessions (set once built). */
  yields: YieldTimers;
  /** Hooks run inside the turn-end transaction. */
  readonly turnEndHooks: TurnEndHook[];
  readonly typingIntervalMs: number;
  readonly typingDelayMs: number;
  readonly autoWake: boolean;
  /** Recent un-addressed group messages per group session (memory, bounded). */
  readonly groupContext: GroupContextWindow;
  /** Sessions with an `enqueueRun` in flight (its transaction not yet handed to the queue). */
  readonly enqueuing: Set<string>;
  /** Sessions a wake reached while their turn ran: the turn wakes them when it ends. */
  readonly wakeAfterTurn: Set<string>;
  /**
   * Sessions whose running turn has stored its end (the session is idle in the store) and is
   * only sending its reply and tidying up: a message for one may begin its turn as it is stored.
   */
  readonly turnEndStored: Set<string>;
  /** False once shutdown began: new runs are refused. */
  accepting: boolean;
  /** Background work to wait for on shutdown. */
  track(work: Promise<unknown>): void;
  /**
   * Enqueues a turn for a session with unread inbox entries; returns its run id. `afterTurn`: called
   * by the executor as a turn ends (the session still counts as running).
   */
  wake(sessionKey: string, afterTurn?: boolean): Promise<string | undefined>;
}
