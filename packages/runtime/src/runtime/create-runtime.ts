import {
  type ChannelContext,
  type ChannelLease,
  type ChannelPlugin,
  ColloquyError,
  type InboundMessage,
  type SessionRecord,
  silentLogger,
} from '@colloquy/core';
import {
  createPairingAccess,
  createThreadBindingAccess,
  isMcpClientSessionKey,
} from '@colloquy/core/internal';
import { turnOperations } from '@colloquy/core/store';
import { defaultDeliverFor, defaultLaneFor, enqueueRun, enqueueRunIf } from '../agent/enqueue-run.js';
import { createHistoryCache } from '../agent/history-cache.js';
import { deliverUnsent, listUnsentReplies } from '../agent/reply-delivery.js';
import { executeTurn } from '../agent/run-executor.js';
import { bridgeClusterEvents, clusterHandlers, createChannelRelays } from '../cluster/cluster-handlers.js';
import { hasActiveRun } from '../cluster/run-job.js';
import { createDeliver, type Deliver } from '../delivery/deliver.js';
import { createDeliveryOutbox, type OutboxStats } from '../delivery/delivery-outbox.js';
import { createDeliveryRecorder } from '../delivery/delivery-recorder.js';
import { createInProcessGateway } from '../gateway/create-gateway.js';
import { createEventBus } from '../gateway/event-bus.js';
import { createRunWaiters } from '../gateway/run-waiters.js';
import type { RuntimeGateway } from '../gateway/runtime-gateway.js';
import { createGroupContextWindow } from '../inbound/group-context.js';
import { type InboundOutcome, receiveInbound, runInboundCommand } from '../inbound/receive-inbound.js';
import { createMcpEndpoint } from '../mcp/server/mcp-endpoint.js';
import type { McpHttpHandler } from '../mcp/server/mcp-http-handler.js';
import { createChatProgress } from '../progress/chat-progress.js';
import { createModelRouter } from '../providers/index.js';
import { createCommandQueue, type QueueStats } from '../queue/command-queue.js';
import { canFoldRuns, type QueuedRun } from '../queue/queued-run.js';
import { createSubagentRegistry } from '../subagents/registry.js';
import type { SubagentRegistry } from '../subagents/subagent-registry.js';
import { defaultWorkspaceRoot } from '../subagents/workspace.js';
import { traceInbound } from '../telemetry/channel-spans.js';
import { createTelemetry } from '../telemetry/telemetry.js';
import { type GatewayServer, startGatewayServer } from '../ws/gateway-server.js';
import { type RecoveryReport, recoverRuns, wakeUnreadInboxes } from './recover-runs.js';
import type { RuntimeContext } from './runtime-context.js';
import type { RuntimeOptions } from './runtime-options.js';
import { sessionToolsHook } from './session-tools-hook.js';
import { createSteadyClock } from './steady-clock.js';
import type { TurnEndHook } from './turn-end-hook-types.js';
import { fireDueWatchesLater } from './watch-notices.js';
import { createYieldTimers } from './yield-wake.js';

/** Lifecycle states of a {@link Runtime}. */
export type RuntimeState = 'created' | 'starting' | 'running' | 'stopping' | 'stopped';

/** Options of {@link Runtime.shutdown}. */
export interface ShutdownOptions {
  /** How long running turns may take to finish before they are cut. Default `runtime.shutdownDrainMs`. */
  drainMs?: number;
}

/** A Colloquy runtime: gateway, queue, agent loop, delivery, plugins and (optionally) the WebSocket server. */
export interface Runtime {
  /** The in-process gateway (what tools, the CLI and plugins call). */
  readonly gateway: RuntimeGateway;
  /** Hands an inbound message to the runtime (what `ChannelContext.receive` calls). Rejects with `ABORTED` once shutdown began. */
  receive(inbound: InboundMessage): Promise<InboundOutcome>;
  /**
   * Recovers runs left by the previous process, starts the plugins, the WebSocket server (with
   * `serve`) and the queue. @throws `CONFIG_INVALID` when serving without `gateway.token`
   */
  start(): Promise<RecoveryReport>;
  /**
   * The one shutdown path: stop accepting, let running turns finish within `drainMs`, cut the rest
   * (they go back to `queued` and run again after a restart), stop plugins, close the server and
   * the store. Idempotent.
   */
  shutdown(options?: ShutdownOptions): Promise<void>;
  /**
   * Queues a turn for an idle session that has unread inbox entries; returns its run id, or
   * `undefined` when there is nothing to do (empty inbox, or a queued or running turn will read
   * it: a running turn wakes its session again when it ends, unless `autoWake` is off). A killed
   * sub-agent is not woken: what reaches its inbox waits for its next run.
   */
  wake(sessionKey: string): Promise<string | undefined>;
  /** The outbound delivery pipeline (send policy, plugin send, `delivery` event). */
  readonly deliver: Deliver;
  /** Adds a hook that runs inside the transaction ending each turn; returns its remover. */
  onTurnEnd(hook: TurnEndHook): () => void;
  /** The WebSocket server while serving. */
  readonly server: GatewayServer | undefined;
  /** Where the runtime is in its life: `created`, `starting`, `running`, `stopping` or `stopped`. */
  readonly state: RuntimeState;
  /** Queue figures. */
  stats(): QueueStats;
  /**
   * The delivery outbox's backlog: messages owed to chats and not yet sent (being sent, waiting
   * for their platform to come back, or behind one that waits), for `colloquy status`.
   */
  outbox(): OutboxStats;
  /**
   * Sub-agent announces: `drain()` delivers due outbox rows now, `sweep()` archives kept sub-agents
   * and removes `cleanup: "delete"` ones (both also run on timers), `workspaceRoot` is where
   * attachments go.
   */
  readonly subagents: Pick<SubagentRegistry, 'drain' | 'sweep' | 'workspaceRoot'>;
}

/**
 * Creates a runtime. Nothing runs until {@link Runtime.start}: gateway calls made before are
 * accepted and their runs wait in the queue.
 *
 * @param options - config, store, plugins, models, tools hook, logger, clock
 * @returns the runtime
 * @example
 * ```ts
 * const runtime = createRuntime({ config: resolveConfig({ agents: { defaults: { model: 'local/llama3.2' } } }), store: new MemoryStore() });
 * await runtime.start();
 * const { runId } = await runtime.gateway.call('agent', { sessionKey: 'main', message: 'Hello' });
 * console.log(await runtime.gateway.call('agent.wait', { runId, timeoutMs: 30_000 }));
 * await runtime.shutdown();
 * ```
 */
export function createRuntime(options: RuntimeOptions): Runtime {
  const { config, store } = options;
  const log = options.logger ?? silentLogger;
  const clock = options.clock ?? createSteadyClock();
  const plugins = new Map<string, ChannelPlugin>();
  for (const plugin of options.plugins ?? []) {
    if (plugins.has(plugin.id)) {
      throw new ColloquyError(
        'CONFIG_INVALID',
        `Two channel plugins have the id "${plugin.id}"; give each a unique id.`,
        {
          id: plugin.id,
        },
      );
    }
    plugins.set(plugin.id, plugin);
  }
  const events = createEventBus(log);
  const relays = createChannelRelays(log);
  const waiters = createRunWaiters();
  const tracked = new Set<Promise<unknown>>();
  const lifetime = new AbortController();
  let state: RuntimeState = 'created';
  let server: GatewayServer | undefined;
  let mcpHttp: McpHttpHandler | undefined;
  let shuttingDown: Promise<void> | undefined;

  const done = new Map<string, () => void>();
  const turns = turnOperations(store);
  const ctx = {
    config,
    store,
    cluster: options.cluster,
    whenDone: (runId: string) =>
      ctx.queue.has(runId) ? new Promise<void>((resolve) => done.set(runId, resolve)) : Promise.resolve(),
    log,
    clock,
    events,
    plugins,
    telemetry: createTelemetry(config, options.telemetry, {
      runningByLane: () => {
        const lanes = ctx.queue.stats().lanes;
        return { main: lanes.main.running, subagent: lanes.subagent.running, cron: lanes.cron.running };
      },
      pendingAnnounces: async () => (await store.listOutbox({ statuses: ['pending'] })).length,
    }),
    models: options.models ?? createModelRouter(config),
    tools: options.tools ?? sessionToolsHook,
    mcp: options.mcp,
    commands: options.commands,
    waiters,
    history: createHistoryCache({ maxBytes: config.runtime.historyCacheMiB * 1024 * 1024 }),
    turns,
    deliveries: createDeliveryRecorder(turns, { signal: lifetime.signal }),
    outbox: createDeliveryOutbox({
      retry: {
        firstDelayMs: config.runtime.deliveryRetry.firstDelayMs,
        maxDelayMs: config.runtime.deliveryRetry.maxDelayMs,
        maxAgeMs: config.runtime.deliveryRetry.maxAgeMinutes * 60_000,
      },
      now: () => clock.now(),
      log,
    }),
    turnEndHooks: [] as TurnEndHook[],
    typingIntervalMs: options.typingIntervalMs ?? 4000,
    typingDelayMs: options.typingDelayMs ?? 0,
    autoWake: options.autoWake ?? true,
    accepting: true,
    enqueuing: new Set<string>(),
    wakeAfterTurn: new Set<string>(),
    turnEndStored: new Set<string>(),
    groupContext: createGroupContextWindow({ config: config.session.groupContext }),
    track(work: Promise<unknown>) {
      const settled = work.catch((error: unknown) => log.warn({ err: error }, 'background work failed'));
      tracked.add(settled);
      void settled.finally(() => tracked.delete(settled));
    },
    wake: (sessionKey: string, afterTurn?: boolean) => wake(sessionKey, afterTurn),
  } as Omit<RuntimeContext, 'deliver' | 'queue' | 'gateway' | 'subagents' | 'yields'> as RuntimeContext;
  const mutable = ctx as { -readonly [K in keyof RuntimeContext]: RuntimeContext[K] };
  mutable.deliver = createDeliver({ config, plugins, events, logger: log, telemetry: ctx.telemetry });
  mutable.queue = createCommandQueue<QueuedRun>({
    limits: config.runtime.lanes,
    execute: (batch, signal) =>
      executeTurn(ctx, batch, signal).finally(() => ctx.subagents.turnSettled(batch[0]!.sessionKey)),
    canFold: canFoldRuns,
    logger: log,
    onDone(ids) {
      for (const id of ids) {
        done.get(id)?.();
        done.delete(id);
      }
    },
  });
  ctx.queue.pause();
  const gateway = createInProcessGateway(ctx);
  ctx.gateway = gateway;
  mutable.subagents = createSubagentRegistry(
    ctx,
    options.workspaceDir ?? defaultWorkspaceRoot(store),
    options.subagents,
  );
  ctx.turnEndHooks.push(ctx.subagents.turnEndHook);
  mutable.yields = createYieldTimers(ctx);
  const progress = createChatProgress(ctx, options.progress);
  events.subscribe((event) => {
    if (event.type === 'run.ended') waiters.notify(event.runId);
  });
  if (ctx.cluster) bridgeClusterEvents(ctx, ctx.cluster);

  const inboundHooks = { commands: options.commands, isOwner: options.isOwner };

  async function wake(sessionKey: string, afterTurn = false): Promise<string | undefined> {
    // An MCP client's inbox is read by the client (events_wait), never by a turn.
    if (isMcpClientSessionKey(sessionKey)) return undefined;
    if (ctx.cluster) return wakeShared(sessionKey);
    if (!ctx.accepting || ctx.queue.pendingCount(sessionKey) > 0 || ctx.enqueuing.has(sessionKey)) {
      return undefined;
    }
    // A running turn reads the inbox when it ends (auto-wake); only the executor wakes past it.
    if (!afterTurn && ctx.queue.runningBatch(sessionKey)) {
      ctx.wakeAfterTurn.add(sessionKey);
      return undefined;
    }
    // The inbox first: it is empty after nearly every turn, and then the session is not read.
    if ((await store.listInbox(sessionKey)).length === 0) return undefined;
    const session = await store.getSession(sessionKey);
    if (!session || isKilledSubagent(session)) return undefined;
    if (ctx.queue.pendingCount(sessionKey) > 0 || ctx.enqueuing.has(sessionKey)) return undefined;
    const run = await enqueueRun(ctx, {
      sessionKey,
      message: '',
      lane: defaultLaneFor(session),
      deliver: defaultDeliverFor(session),
      meta: { wake: true },
    });
    return run.runId;
  }

  /**
   * With a cluster: queues a wake turn when, in one transaction holding the session row, the
   * session has unread inbox entries, no run queued or running on any instance, and is not a
   * killed sub-agent.
   */
  async function wakeShared(sessionKey: string): Promise<string | undefined> {
    if (!ctx.accepting) return undefined;
    const session = await store.getSession(sessionKey);
    if (!session || isKilledSubagent(session)) return undefined;
    const run = await enqueueRunIf(
      ctx,
      {
        sessionKey,
        message: '',
        lane: defaultLaneFor(session),
        deliver: defaultDeliverFor(session),
        meta: { wake: true },
      },
      undefined,
      async (tx) => {
        const current = await tx.getSession(sessionKey);
        if (!current || isKilledSubagent(current)) return false;
        return (await tx.listInbox(sessionKey)).length > 0 && !(await hasActiveRun(tx, sessionKey));
      },
    );
    return run?.runId;
  }

  function contextFor(plugin: ChannelPlugin): ChannelContext {
    return {
      receive: async (message) => {
        await runtime.receive(message);
      },
      runCommand: (message) => runInboundCommand(ctx, inboundHooks, message),
      threadBindings: createThreadBindingAccess(store, plugin.id),
      pairing: createPairingAccess(store, plugin.id),
      commands: options.commandList ?? [],
      log: log.child({ plugin: plugin.id }),
      gateway,
      signal: lifetime.signal,
      lease: (name, signal) => ctx.cluster?.lease?.(name, signal) ?? Promise.resolve(soleLease()),
      ...(ctx.cluster ? { relay: relays.relayFor(plugin.id, ctx.cluster) } : {}),
    };
  }

  async function start(): Promise<RecoveryReport> {
    if (state !== 'created') {
      throw new ColloquyError('CONFLICT', `The runtime is ${state}; start() can be called once.`);
    }
    state = 'starting';
    // With a cluster, what a dead instance left is resumed by the jobs themselves (see runJob).
    const report = ctx.cluster ? { requeued: [], resumed: [], interrupted: [] } : await recoverRuns(ctx);
    // Replies the previous process planned but did not send (the interrupted runs' notices too),
    // read while the queue is paused: no turn of this process has ended yet.
    const unsent = ctx.cluster ? [] : await listUnsentReplies(ctx);
    if (report.resumed.length + report.interrupted.length + report.requeued.length > 0) {
      log.info(
        {
          resumed: report.resumed.length,
          requeued: report.requeued.length,
          interrupted: report.interrupted.length,
        },
        'recovered runs from the previous process',
      );
    }
    try {
      for (const plugin of plugins.values()) await plugin.start(contextFor(plugin));
      if (options.serve) {
        if (!config.gateway.token) {
          throw new ColloquyError(
            'CONFIG_INVALID',
            'Serving the gateway needs gateway.token in the config (clients authenticate with it).',
            { path: 'gateway.token' },
          );
        }
        mcpHttp = config.gateway.mcp.enabled ? createMcpEndpoint(ctx, gateway) : undefined;
        server = await startGatewayServer({
          gateway,
          token: config.gateway.token,
          host: config.gateway.host,
          port: config.gateway.port,
          logger: log,
          ...(mcpHttp ? { routes: { '/mcp': mcpHttp.handle } } : {}),
        });
      }
    } catch (error) {
      await shutdown({ drainMs: 0 });
      throw error;
    }
    // Replies the previous process planned but did not send, or left waiting for a platform, go
    // into the outbox before any turn of this process can add a later reply to the same chat.
    if (unsent.length > 0) await deliverUnsent(ctx, unsent);
    // Progress lines the previous process showed: picked up before any helper run ends here.
    ctx.track(progress.restore());
    ctx.queue.resume();
    try {
      await ctx.cluster?.start(clusterHandlers(ctx, relays), config.runtime.lanes);
    } catch (error) {
      await shutdown({ drainMs: 0 });
      throw error;
    }
    state = 'running';
    // Announces left pending by the previous process go out now that plugins run (with a
    // cluster, each run's job sends the replies its turns left unsent).
    ctx.track(ctx.subagents.start());
    // Unread inbox entries whose wake the previous process did not get to (a crash between the two).
    ctx.track(wakeUnreadInboxes(ctx));
    // Yields with a timeout, left by the previous process: their wakes are armed again.
    ctx.track(ctx.yields.restore());
    // Watches whose target changed while no process could fire them (a crash, another instance).
    fireDueWatchesLater(ctx);
    return report;
  }

  function shutdown(shutdownOptions: ShutdownOptions = {}): Promise<void> {
    shuttingDown ??= (async () => {
      state = 'stopping';
      // Channels stop taking messages first (a refused message is never acknowledged to its
      // sender or platform), then the runtime stops accepting and drains.
      await Promise.all(
        [...plugins.values()].map((plugin) =>
          plugin.stopReceiving
            ? settlesWithin(plugin.stopReceiving(), 5000).catch(() => false)
            : Promise.resolve(true),
        ),
      );
      ctx.accepting = false;
      ctx.yields.stop();
      ctx.queue.pause();
      // With a cluster: take no new jobs; the jobs in flight settle with their turns below.
      const clusterStopped = ctx.cluster?.stop();
      const drainMs = shutdownOptions.drainMs ?? config.runtime.shutdownDrainMs;
      if (!(await settlesWithin(ctx.queue.idle(), drainMs))) {
        const cut = ctx.queue.abortRunning(
          'shutdown',
          'The runtime is shutting down; this run goes back to the queue and runs again after a restart.',
        );
        log.warn({ cut }, 'drain budget spent: running turns were cut and re-queued');
        await settlesWithin(ctx.queue.idle(), 2000);
      }
      if (clusterStopped) await settlesWithin(clusterStopped, 5000);
      // Lines of helpers still at work stay as they are: the next process finalises them.
      progress.stop();
      // Replies waiting for a platform to come back are left, stored, to the next process; a send
      // under way finishes and records where it stands (else it would look cut, and not be sent).
      ctx.outbox.close();
      await settlesWithin(ctx.outbox.idle(), 5000);
      await settlesWithin(ctx.subagents.stop(), Math.max(250, Math.min(drainMs, 2000)));
      await settlesWithin(Promise.all(tracked), Math.max(250, Math.min(drainMs, 2000)));
      // Outcomes of sends that already went out are stored before the store closes (a batch the
      // store still refuses after 5 s is given up: the next start records those replies as cut).
      await settlesWithin(ctx.deliveries.settled(), 5000);
      waiters.releaseAll();
      lifetime.abort(new ColloquyError('ABORTED', 'The runtime is shutting down.'));
      for (const plugin of plugins.values()) {
        try {
          await settlesWithin(plugin.stop(), 5000);
        } catch (error) {
          log.warn({ err: error, plugin: plugin.id }, 'a plugin failed to stop');
        }
      }
      await mcpHttp?.close();
      await server?.close();
      server = undefined;
      if (ctx.mcp) await settlesWithin(ctx.mcp.close(), 5000);
      try {
        await store.close();
      } catch (error) {
        log.warn({ err: error }, 'closing the store failed');
      }
      state = 'stopped';
    })();
    return shuttingDown;
  }

  const runtime: Runtime = {
    gateway,
    receive: (inbound) =>
      traceInbound(ctx.telemetry, inbound, () =>
        receiveInbound(ctx, { commands: options.commands, isOwner: options.isOwner }, inbound),
      ),
    start,
    shutdown,
    wake: (sessionKey) => wake(sessionKey),
    deliver: ctx.deliver,
    onTurnEnd(hook) {
      ctx.turnEndHooks.push(hook);
      return () => {
        const index = ctx.turnEndHooks.indexOf(hook);
        if (index >= 0) ctx.turnEndHooks.splice(index, 1);
      };
    },
    get server() {
      return server;
    },
    get state() {
      return state;
    },
    stats: () => ctx.queue.stats(),
    outbox: () => ctx.outbox.stats(),
    subagents: ctx.subagents,
  };
  return runtime;
}

/**
 * True for a sub-agent that was killed (`subagents kill`, `agent.abort`): nothing in its inbox (its
 * own sub-agents' killed announces, a watch notice, a yield timeout) wakes it; a new run for it
 * (a message sent to it) reads that inbox.
 */
function isKilledSubagent(session: SessionRecord): boolean {
  return session.kind === 'subagent' && session.status === 'killed';
}

/** The lease of a runtime alone: never lost (the plugin's `stop` ends the connection). */
function soleLease(): ChannelLease {
  return { lost: new AbortController().signal, release: async () => {} };
}

/** Resolves true when `promise` settles within `ms`, false otherwise (never rejects). */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(0, ms));
  });
  try {
    return await Promise.race([
      promise.then(
        () => true,
        () => true,
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
