import type { ChannelCommand, ChannelContext, InboundMessage, Logger } from '@colloquy/core';
import { createPairingAccess, createThreadBindingAccess } from '@colloquy/core/internal';
import { MemoryStore } from '@colloquy/core/store';

/** A hand-made ChannelContext for plugin-level tests: records what the plugin hands over. */
export interface TestContext {
  ctx: ChannelContext;
  received: InboundMessage[];
  /** The store behind `ctx.threadBindings` and `ctx.pairing`. */
  store: MemoryStore;
  logs: { level: string; msg: string; obj: object | string }[];
  /** Resolves with the n-th received message (1-based), or rejects after `timeoutMs`. */
  waitForReceived(count: number, timeoutMs?: number): Promise<InboundMessage>;
  abort(): void;
}

/** Builds a {@link TestContext}; `receive` may be replaced to simulate failures. */
export function createTestContext(
  options: { commands?: ChannelCommand[]; receive?: (m: InboundMessage) => Promise<void> } = {},
): TestContext {
  const received: InboundMessage[] = [];
  const store = new MemoryStore();
  const logs: TestContext['logs'] = [];
  const listeners = new Set<() => void>();
  const controller = new AbortController();
  const logger = (bindingsObj: Record<string, unknown>): Logger => {
    const write =
      (level: string) =>
      (obj: object | string, msg?: string): void => {
        logs.push({ level, msg: msg ?? (typeof obj === 'string' ? obj : ''), obj: { ...bindingsObj, obj } });
      };
    return {
      debug: write('debug'),
      info: write('info'),
      warn: write('warn'),
      error: write('error'),
      child: (more) => logger({ ...bindingsObj, ...more }),
    };
  };
  const ctx: ChannelContext = {
    async receive(message) {
      if (options.receive) await options.receive(message);
      received.push(message);
      for (const l of listeners) l();
    },
    threadBindings: createThreadBindingAccess(store, 'telegram'),
    pairing: createPairingAccess(store, 'telegram'),
    commands: options.commands ?? [],
    log: logger({}),
    signal: controller.signal,
  };
  return {
    ctx,
    received,
    store,
    logs,
    abort: () => controller.abort(),
    waitForReceived(count, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        const check = (): boolean => {
          const m = received[count - 1];
          if (m) {
            clearTimeout(timer);
            listeners.delete(onChange);
            resolve(m);
            return true;
          }
          return false;
        };
        const onChange = (): void => void check();
        const timer = setTimeout(() => {
          listeners.delete(onChange);
          reject(new Error(`timed out waiting for inbound message #${count} (got ${received.length})`));
        }, timeoutMs);
        if (!check()) listeners.add(onChange);
      });
    },
  };
}
