import type { Gateway, Logger } from '@colloquy/core';
import type { GatewayEvent } from '@colloquy/core/gateway';
import { describe, expect, it } from 'vitest';
import type { ServerFrame } from '../protocol/frames.js';
import { createChatHub } from './chat-hub.js';
import { createGatewayBridge } from './gateway-bridge.js';

const silent = { debug() {}, info() {}, warn() {}, error() {} } as unknown as Logger;

/** A gateway whose sessions all deliver to one web chat room, counting `session.status` calls. */
function fakeGateway(): { gateway: Gateway; emit(event: GatewayEvent): void; statusCalls: string[] } {
  const listeners: ((event: GatewayEvent) => void)[] = [];
  const statusCalls: string[] = [];
  const gateway = {
    async call(method: string, params: { key: string }) {
      if (method !== 'session.status') throw new Error(`unexpected ${method}`);
      statusCalls.push(params.key);
      return { session: { key: params.key, deliveryContext: { channel: 'webchat', to: 'room-1' } } };
    },
    subscribe(listener: (event: GatewayEvent) => void) {
      listeners.push(listener);
      return () => {};
    },
  } as unknown as Gateway;
  const emit = (event: GatewayEvent): void => {
    for (const listener of listeners) listener(event);
  };
  return { gateway, emit, statusCalls };
}

describe('the gateway bridge', () => {
  it('streams a web chat session after one lookup, and never looks up sessions of other channels', async () => {
    const { gateway, emit, statusCalls } = fakeGateway();
    const hub = createChatHub({ limit: 10, load: async () => [] });
    const frames: ServerFrame[] = [];
    hub.broadcast = (_chatId: string, frame: ServerFrame) => frames.push(frame);
    const bridge = createGatewayBridge({
      gateway,
      channelId: 'webchat',
      hub,
      log: silent,
      historyLimit: 10,
      publicSender: (sender) => ({ id: sender.id, name: sender.name ?? sender.id }),
    });
    const web = 'agent:main:webchat:dm:visitor-1';
    const telegram = 'agent:main:telegram:dm:42';
    for (const [sessionKey, runId] of [
      [web, 'run-w'],
      [telegram, 'run-t'],
    ] as const) {
      emit({ type: 'run.started', runId, sessionKey });
      emit({ type: 'run.delta', runId, sessionKey, text: 'hi' });
      emit({ type: 'run.ended', runId, sessionKey, status: 'done' });
    }
    await expect.poll(() => frames.length).toBe(3);
    expect(statusCalls).toEqual([web]);
    expect(frames.map((f) => f.type)).toEqual(['run', 'delta', 'run']);
    bridge.close();
  });
});
