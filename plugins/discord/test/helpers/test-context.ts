import {
  type ChannelCommand,
  type ChannelContext,
  type InboundMessage,
  silentLogger,
  type ThreadBinding,
  type ThreadBindingAccess,
} from '@colloquy/core';

/** Thread bindings kept in a Map, shaped like the runtime's Store-backed access. */
export class MemoryBindings implements ThreadBindingAccess {
  readonly rows = new Map<string, ThreadBinding>();
  writes = 0;

  get(accountId: string, threadId: string): ThreadBinding | undefined {
    return this.rows.get(`${accountId}:${threadId}`);
  }
  put(binding: Omit<ThreadBinding, 'channel'>): void {
    this.writes += 1;
    this.rows.set(`${binding.accountId}:${binding.threadId}`, { channel: 'discord', ...binding });
  }
  touch(accountId: string, threadId: string, at: number): void {
    const row = this.get(accountId, threadId);
    if (row !== undefined) this.put({ ...row, lastActiveAt: at });
  }
  remove(accountId: string, threadId: string): void {
    this.rows.delete(`${accountId}:${threadId}`);
  }
  list(): ThreadBinding[] {
    return [...this.rows.values()];
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
    commands: options.commands ?? [],
    log: silentLogger,
    signal: controller.signal,
    abort: () => controller.abort(),
    async receive(message) {
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
