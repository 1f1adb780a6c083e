import {
  type ChannelPlugin,
  type ColloquyConfig,
  type ColloquyConfigInput,
  ColloquyError,
  type InboundMessage,
  resolveConfig,
  type StoredMessage,
} from '@colloquy/core';
import type { AgentSessionInit, AgentWaitResult } from '@colloquy/core/gateway';
import type { ModelProvider } from '@colloquy/core/model';
import { MemoryStore, type Store } from '@colloquy/core/store';
import {
  createModelRouter,
  createRuntime,
  type InboundOutcome,
  type Runtime,
  type RuntimeGateway,
  type RuntimeOptions,
} from '@colloquy/runtime';
import {
  createMemoryChannel,
  createScriptedModel,
  type InjectInput,
  type MemoryChannel,
  type MemoryChannelOptions,
  type ScriptedModel,
  type ScriptFn,
  type ScriptStep,
  type SentMessage,
} from '../index.js';

/** The model reference the harness wires to its scripted model. */
export const SCRIPTED_MODEL_REF = 'scripted/test';

/** Options of {@link createTestHarness}. */
export interface TestHarnessOptions {
  /** The scripted model's script (ignored when `model` is given). Default: empty; push replies later. */
  script?: readonly ScriptStep[] | ScriptFn;
  /** A ready scripted model, served as `<model.id>/...`. Default `createScriptedModel(script)`. */
  model?: ScriptedModel;
  /**
   * Config input, resolved with `resolveConfig`. `agents.defaults.model` defaults to `scripted/test`;
   * `runtime.shutdownDrainMs` to 500.
   */
  config?: ColloquyConfigInput;
  /** The store. Default a fresh `MemoryStore`. The runtime closes it in `close()`. */
  store?: Store;
  /** Options of the memory channel, or a ready one. Default `createMemoryChannel()` (id `memory`). */
  channel?: MemoryChannelOptions | MemoryChannel;
  /** More channel plugins to run beside the memory channel. */
  plugins?: readonly ChannelPlugin[];
  /** More model providers by id (e.g. a real provider against a local fake). */
  providers?: Readonly<Record<string, ModelProvider>>;
  /** Anything else for `createRuntime` (tools, commands, isOwner, clock, logger, ...). */
  runtime?: Omit<RuntimeOptions, 'config' | 'store' | 'plugins' | 'models'>;
  /** Start the runtime before returning. Default true. */
  start?: boolean;
}

/** What one {@link TestHarness.send} did. */
export interface HarnessTurn {
  /** The inbound message as the channel normalised it. */
  inbound: InboundMessage;
  /** What the runtime did with it (`queued`, `ignored`, `command`, `send-policy`). */
  outcome: InboundOutcome;
  /** The session the message went to (absent when ignored). */
  sessionKey?: string;
  /** The run it queued, if any. */
  runId?: string;
  /** How the run ended (status, reply, error, usage), when one was queued. */
  result?: AgentWaitResult;
  /** Everything the channel sent from the inbound message until the turn was over (replies, notices). */
  sent: SentMessage[];
}

/** A booted runtime with a scripted model, a memory channel and helpers. See {@link createTestHarness}. */
export interface TestHarness {
  /** The running runtime. */
  readonly runtime: Runtime;
  /** The runtime's in-process gateway. */
  readonly gateway: RuntimeGateway;
  /** The runtime's store. */
  readonly store: Store;
  /** The resolved configuration the runtime runs with. */
  readonly config: ColloquyConfig;
  /** The scripted model (`scripted/test`): push replies, read `requests`. */
  readonly model: ScriptedModel;
  /** The memory channel: read `sent`, `inject` platform messages yourself. */
  readonly channel: MemoryChannel;
  /**
   * Delivers an inbound message through the runtime as the channel would and waits until its turn is
   * over: the run ended and its reply was delivered. Ignored messages and commands resolve at once.
   * @throws ColloquyError `TIMEOUT` when the turn takes longer than `timeoutMs` (default 10000)
   */
  send(input: InjectInput | string, options?: { timeoutMs?: number }): Promise<HarnessTurn>;
  /**
   * Enqueues a run with the gateway's `agent` method (no channel involved) and waits for it to end.
   * The session must exist (or be an agent's main key) unless `session` init fields are given.
   * @throws ColloquyError `TIMEOUT` when the run takes longer than `timeoutMs` (default 10000)
   */
  run(
    sessionKey: string,
    message: string,
    options?: { timeoutMs?: number; session?: AgentSessionInit },
  ): Promise<AgentWaitResult>;
  /** Resolves once the session has no running or queued turn (polls `session.status`). */
  waitForIdle(sessionKey: string, timeoutMs?: number): Promise<void>;
  /** The session's transcript, oldest first (`chat.history`; aliases like `main` work). */
  transcript(sessionKey: string, limit?: number): Promise<StoredMessage[]>;
  /** Shuts the runtime down (plugins stopped, store closed). Idempotent. */
  close(): Promise<void>;
  /** Same as `close`, for `await using`. */
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Boots a Colloquy runtime for tests in one call: a `MemoryStore` (or your store), the scripted model
 * as `scripted/test` (the default model), and an in-memory channel, with helpers to send a message and
 * wait for the turn, read the transcript and close everything.
 *
 * @param options - see {@link TestHarnessOptions}
 * @returns the started harness; call `close()` in `afterEach`
 * @throws ColloquyError `CONFIG_INVALID` when `config` does not resolve
 * @example
 * ```ts
 * const harness = await createTestHarness({ script: ['Hello! How can I help?'] });
 * const turn = await harness.send('hi');
 * expect(turn.result?.status).toBe('done');
 * expect(harness.channel.sent.map((m) => m.text)).toEqual(['Hello! How can I help?']);
 * await harness.close();
 * ```
 */
export async function createTestHarness(options: TestHarnessOptions = {}): Promise<TestHarness> {
  const model = options.model ?? createScriptedModel(options.script ?? []);
  const channel = isMemoryChannel(options.channel) ? options.channel : createMemoryChannel(options.channel);
  const input = options.config ?? {};
  const config = resolveConfig({
    ...input,
    agents: {
      ...input.agents,
      defaults: { model: `${model.id}/test`, ...input.agents?.defaults },
    },
    runtime: { shutdownDrainMs: 500, ...input.runtime },
  });
  const store = options.store ?? new MemoryStore();
  const runtime = createRuntime({
    ...options.runtime,
    config,
    store,
    plugins: [channel, ...(options.plugins ?? [])],
    models: createModelRouter(config, { providers: { ...options.providers, [model.id]: model } }),
  });
  const gateway = runtime.gateway;
  if (options.start !== false) await runtime.start();

  const waitForIdle = async (sessionKey: string, timeoutMs = 10_000): Promise<void> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const status = await gateway.call('session.status', { key: sessionKey });
      if (status.activeRunId === undefined && status.queueDepth === 0) return;
      if (Date.now() > deadline) {
        throw new ColloquyError(
          'TIMEOUT',
          `Session "${sessionKey}" was still busy after ${timeoutMs} ms (run ${status.activeRunId ?? 'queued'}). ` +
            'Did the scripted model run out of replies, or a tool hang?',
          { sessionKey, timeoutMs },
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  };

  const waitForRun = async (runId: string, timeoutMs: number): Promise<AgentWaitResult> => {
    const result = await gateway.call('agent.wait', { runId, timeoutMs });
    if (result.waitTimedOut) {
      throw new ColloquyError(
        'TIMEOUT',
        `Run ${runId} did not end within ${timeoutMs} ms (status ${result.status}). ` +
          `The scripted model got ${model.callCount} request(s) and has ${model.remaining} step(s) left.`,
        { runId, timeoutMs },
      );
    }
    return result;
  };

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= runtime.state === 'created' ? Promise.resolve() : runtime.shutdown();
    return closing;
  };

  return {
    runtime,
    gateway,
    store,
    config,
    model,
    channel,
    async send(message, sendOptions = {}) {
      const timeoutMs = sendOptions.timeoutMs ?? 10_000;
      const before = channel.sent.length;
      const inbound = channel.toInbound(message);
      const outcome = await runtime.receive(inbound);
      const turn: HarnessTurn = { inbound, outcome, sent: [] };
      if (outcome.action !== 'ignored') turn.sessionKey = outcome.sessionKey;
      if (outcome.action === 'queued') {
        turn.runId = outcome.runId;
        turn.result = await waitForRun(outcome.runId, timeoutMs);
        await waitForIdle(outcome.sessionKey, timeoutMs);
      }
      turn.sent = channel.sent.slice(before);
      return turn;
    },
    async run(sessionKey, message, runOptions = {}) {
      const { runId, sessionKey: key } = await gateway.call('agent', {
        sessionKey,
        message,
        ...(runOptions.session ? { session: runOptions.session } : {}),
      });
      const timeoutMs = runOptions.timeoutMs ?? 10_000;
      const result = await waitForRun(runId, timeoutMs);
      await waitForIdle(key, timeoutMs);
      return result;
    },
    waitForIdle,
    async transcript(sessionKey, limit = 1000) {
      const { messages } = await gateway.call('chat.history', { key: sessionKey, limit });
      return messages;
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

function isMemoryChannel(value: MemoryChannelOptions | MemoryChannel | undefined): value is MemoryChannel {
  return typeof (value as Partial<MemoryChannel> | undefined)?.inject === 'function';
}
