// A minimal hand-made ChannelContext: it records what the plugin hands to the runtime.

import {
  type ChannelContext,
  createPairingAccess,
  createThreadBindingAccess,
  type InboundMessage,
  type Logger,
  MemoryStore,
} from '@colloquy/core';

export interface LogLine {
  level: 'debug' | 'info' | 'warn' | 'error';
  msg: string;
  obj: object | string;
}

export interface TestContext {
  ctx: ChannelContext;
  /** The store behind `ctx.threadBindings` and `ctx.pairing`. */
  store: MemoryStore;
  received: InboundMessage[];
  logs: LogLine[];
  abort(): void;
}

function recordingLogger(lines: LogLine[]): Logger {
  const at =
    (level: LogLine['level']) =>
    (obj: object | string, msg?: string): void => {
      lines.push({ level, obj, msg: msg ?? (typeof obj === 'string' ? obj : '') });
    };
  const logger: Logger = {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: () => logger,
  };
  return logger;
}

export function createTestContext(): TestContext {
  const received: InboundMessage[] = [];
  const logs: LogLine[] = [];
  const controller = new AbortController();
  const store = new MemoryStore();
  const ctx: ChannelContext = {
    async receive(message) {
      received.push(message);
    },
    threadBindings: createThreadBindingAccess(store, 'whatsapp'),
    pairing: createPairingAccess(store, 'whatsapp'),
    commands: [],
    log: recordingLogger(logs),
    signal: controller.signal,
  };
  return { ctx, store, received, logs, abort: () => controller.abort() };
}

/** Polls until `check` returns (or resolves to) a value other than undefined/false (bounded). */
export async function eventually<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 2000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Lets queued callbacks run (the plugin processes inbound messages asynchronously). */
export const settle = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
};
