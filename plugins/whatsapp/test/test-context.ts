// A minimal hand-made ChannelContext: it records what the plugin hands to the runtime.

import type { ChannelContext, InboundMessage, Logger } from '@colloquy/core';
import { createPairingAccess, createThreadBindingAccess } from '@colloquy/core/internal';
import { MemoryStore } from '@colloquy/core/store';
import { dm, type FakeWhatsApp } from './fake-socket.js';

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

/**
 * Waits past any reconnect the plugin could have scheduled: twice the longest delay of its backoff,
 * for a late timer. For "it did not reconnect" checks, where nothing happens when the plugin is right.
 */
export function pastAnyReconnect(reconnect: { maxDelayMs: number }): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 2 * reconnect.maxDelayMs));
}

/**
 * Delivers a marker message on the fake's current socket and waits until the plugin hands it on.
 * The plugin takes a connection's messages one at a time, in order, so whatever was delivered
 * before it has been dealt with: the positive event a "nothing more came in" check waits for.
 *
 * @returns the texts received before the marker (the marker is taken out of `t.received`)
 */
export async function receivedBefore(fake: FakeWhatsApp, t: TestContext): Promise<string[]> {
  const text = `marker ${Math.random()}`;
  fake.current.deliver([dm('15559990000@s.whatsapp.net', text, { pushName: 'Marker' })]);
  await eventually(() => t.received.some((m) => m.text === text));
  t.received.splice(
    t.received.findIndex((m) => m.text === text),
    1,
  );
  return t.received.map((m) => m.text);
}

/** Lets queued callbacks run (the plugin processes inbound messages asynchronously). */
export const settle = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
};
