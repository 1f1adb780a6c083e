import {
  type ChannelCommand,
  type ChannelContext,
  type InboundMessage,
  silentLogger,
  type ThreadBinding,
  type ThreadBindingAccess,
} from '@colloquy/core';
import { createPairingAccess, createThreadBindingAccess } from '@colloquy/core/internal';
import { MemoryStore } from '@colloquy/core/store';

/** The Store-backed thread bindings the runtime gives plugins, counting writes. */
export class MemoryBindings implements ThreadBindingAccess {
  readonly store = new MemoryStore();
  private readonly access = createThreadBindingAccess(this.store, 'discord');
  writes = 0;

  get(accountId: string, threadId: string): Promise<ThreadBinding | undefined> {
    return this.access.get(accountId, threadId);
  }
  put(binding: Omit<ThreadBinding, 'channel'>): Promise<void> {
    this.writes += 1;
    return this.access.put(binding);
  }
  touch(accountId: string, threadId: string, at: number): Promise<void> {
    return this.access.touch(accountId, threadId, at);
  }
  remove(accountId: string, threadId: string): Promise<void> {
    return this.access.remove(accountId, threadId);
  }
  list(): Promise<ThreadBinding[]> {
    return this.access.list();
  }
}

/** A hand-made ChannelContext that records what the plugin hands the runtime. */
export interface TestContext extends ChannelContext {
  received: InboundMessage[];
  commandsRun: InboundMessage[];
  bindings: MemoryBindings;
  abort(): void;
}

export function createTestContext(
  options: {
    bindings?: MemoryBindings;
    commands?: ChannelCommand[];
    runCommand?: (message: InboundMessage) => Promise<string>;
    /** Called before a message is recorded; throwing refuses it, as a runtime that cannot take it does. */
    receive?: (message: InboundMessage) => Promise<void>;
  } = {},
): TestContext {
  const controller = new AbortController();
  const received: InboundMessage[] = [];
  const commandsRun: InboundMessage[] = [];
  const bindings = options.bindings ?? new MemoryBindings();
  const runCommand = options.runCommand;
  return {
    received,
    commandsRun,
    bindings,
    threadBindings: bindings,
    pairing: createPairingAccess(bindings.store, 'discord'),
    commands: options.commands ?? [],
    log: silentLogger,
    signal: controller.signal,
    abort: () => controller.abort(),
    async receive(message) {
      await options.receive?.(message);
      received.push(message);
    },
    ...(runCommand
      ? {
          async runCommand(message: InboundMessage) {
            commandsRun.push(message);
            return runCommand(message);
          },
        }
      : {}),
  };
}
