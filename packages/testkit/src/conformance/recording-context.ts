import {
  type ChannelCommand,
  type ChannelContext,
  ColloquyError,
  type InboundMessage,
  type Logger,
  silentLogger,
} from '@colloquy/core';
import { createPairingAccess, createThreadBindingAccess } from '@colloquy/core/internal';
import { MemoryStore } from '@colloquy/core/store';

/** Options of {@link createRecordingChannelContext}. */
export interface RecordingChannelContextOptions {
  /** The plugin id (the `channel` of stored thread bindings). */
  channel: string;
  /** Slash commands offered to the plugin. Default `[{ name: 'new', ... }, { name: 'status', ... }]`. */
  commands?: readonly ChannelCommand[];
  /** The logger handed to the plugin. Default: silent. */
  log?: Logger;
}

/** A `ChannelContext` that records what the plugin hands to the runtime, for plugin tests. */
export interface RecordingChannelContext extends ChannelContext {
  /** Every message passed to `receive`, oldest first. */
  readonly inbound: readonly InboundMessage[];
  /** The in-memory store behind `threadBindings` and `pairing`: what the plugin stored. */
  readonly store: MemoryStore;
  /** Resolves with the `index`-th inbound message (0-based) once it arrived; rejects after `timeoutMs`. */
  waitForInbound(index: number, timeoutMs?: number): Promise<InboundMessage>;
  /** Aborts `signal`, as the runtime does at shutdown. */
  abort(): void;
}

const DEFAULT_COMMANDS: readonly ChannelCommand[] = [
  { name: 'new', description: 'Start a fresh session' },
  { name: 'status', description: 'Show the session status' },
];

/**
 * Creates a `ChannelContext` for driving a plugin without a runtime: `receive` records messages,
 * thread bindings and pairing live in a `MemoryStore`, the logger is silent.
 *
 * @param options - see {@link RecordingChannelContextOptions}
 * @returns the context with its recordings
 * @example
 * ```ts
 * const ctx = createRecordingChannelContext({ channel: plugin.id });
 * await plugin.start(ctx);
 * const inbound = await ctx.waitForInbound(0);
 * ```
 */
export function createRecordingChannelContext(
  options: RecordingChannelContextOptions,
): RecordingChannelContext {
  const inbound: InboundMessage[] = [];
  const store = new MemoryStore();
  const waiters = new Set<() => void>();
  const controller = new AbortController();

  return {
    get inbound() {
      return inbound;
    },
    store,
    async receive(message) {
      inbound.push(message);
      for (const wake of waiters) wake();
    },
    threadBindings: createThreadBindingAccess(store, options.channel),
    pairing: createPairingAccess(store, options.channel),
    commands: options.commands ?? DEFAULT_COMMANDS,
    log: options.log ?? silentLogger,
    signal: controller.signal,
    abort: () => controller.abort(),
    waitForInbound(index, timeoutMs = 5000) {
      const found = inbound[index];
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(wake);
          reject(
            new ColloquyError(
              'TIMEOUT',
              `No inbound message #${index} reached ctx.receive within ${timeoutMs} ms (got ${inbound.length}). ` +
                'Check that the plugin is connected to the fake platform and calls ctx.receive for new messages.',
            ),
          );
        }, timeoutMs);
        const wake = () => {
          const message = inbound[index];
          if (!message) return;
          clearTimeout(timer);
          waiters.delete(wake);
          resolve(message);
        };
        waiters.add(wake);
      });
    },
  };
}
