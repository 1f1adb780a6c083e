import type { Gateway, Logger } from '@colloquy/core';
import type { GatewayEvent } from '@colloquy/core/gateway';
import { describe, expect, it } from 'vitest';
import type { ServerFrame } from '../protocol/frames.js';
import { type ChatHub, createChatHub } from './chat-hub.js';
import { createGatewayBridge, type GatewayBridge } from './gateway-bridge.js';

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

function bridgeOver(gateway: Gateway, hub: ChatHub): GatewayBridge {
  return createGatewayBridge({
    gateway,
    channelId: 'webchat',
    hub,
    log: silent,
    historyLimit: 10,
    publicSender: (sender) => ({ id: sender.id, name: sender.name ?? sender.id }),
  });
}

describe('the gateway bridge', () => {
  it('streams a web chat session after one lookup, and never looks up sessions of other channels', async () => {
    const { gateway, emit, statusCalls } = fakeGateway();
    const hub = createChatHub({ limit: 10, load: async () => [] });
    const frames: ServerFrame[] = [];
    hub.broadcast = (_chatId: string, frame: ServerFrame) => frames.push(frame);
    const bridge = bridgeOver(gateway, hub);
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

describe("the gateway bridge's memory of chats", () => {
  it('forgets the session of the least recent chat past its cap, and finds it again by listing sessions', async () => {
    const keys = [1, 2, 3].map((n) => `agent:main:webchat:dm:${n}`);
    const chatOf = (key: string) => `room-${key.split(':').at(-1)}`;
    const calls: string[] = [];
    const listeners: ((event: GatewayEvent) => void)[] = [];
    const gateway = {
      async call(method: string, params: { key?: string }) {
        calls.push(method);
        const row = (key: string) => ({ key, deliveryContext: { channel: 'webchat', to: chatOf(key) } });
        if (method === 'session.status') return { session: row(params.key!) };
        if (method === 'sessions.list') return { sessions: keys.map(row) };
        if (method === 'chat.history') return { messages: [] };
        throw new Error(`unexpected ${method}`);
      },
      subscribe(listener: (event: GatewayEvent) => void) {
        listeners.push(listener);
        return () => {};
      },
    } as unknown as Gateway;
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
      maxCached: 2,
    });
    // Three visitors' runs: each session is looked up once, and its chat remembered.
    keys.forEach((sessionKey, i) => {
      for (const listener of listeners) listener({ type: 'run.started', runId: `run-${i}`, sessionKey });
    });
    await expect.poll(() => frames.length).toBe(3);
    calls.length = 0;
    await bridge.loadHistory({ type: 'direct', id: chatOf(keys[2]!) });
    expect(calls).toEqual(['chat.history']);
    calls.length = 0;
    await bridge.loadHistory({ type: 'direct', id: chatOf(keys[0]!) });
    expect(calls).toEqual(['sessions.list', 'chat.history']);
    bridge.close();
  });
});

describe("the gateway bridge's spawn timeline", () => {
  it('sends a watched tree again as its runs change, one read per root, until the owner stops watching', async () => {
    const listeners: ((event: GatewayEvent) => void)[] = [];
    const treeCalls: string[] = [];
    const gateway = {
      async call(method: string, params: { key: string }) {
        if (method === 'sessions.list') return { sessions: [], total: 0 };
        if (method !== 'sessions.tree') throw new Error(`unexpected ${method}`);
        treeCalls.push(params.key);
        return { rootKey: params.key, nodes: [], truncated: false, now: treeCalls.length };
      },
      subscribe(listener: (event: GatewayEvent) => void) {
        listeners.push(listener);
        return () => {};
      },
    } as unknown as Gateway;
    const hub = createChatHub({ limit: 10, load: async () => [] });
    const owner = (visitorId: string) =>
      ({
        socket: {},
        visitorId,
        address: '127.0.0.1',
        chat: { type: 'direct', id: visitorId },
        admin: true,
      }) as never;
    const [first, second] = [owner('o1'), owner('o2')];
    hub.join(first);
    hub.join(second);
    const sent: Array<{ to: unknown; frame: ServerFrame }> = [];
    hub.sendTo = (to, frame) => {
      sent.push({ to, frame });
    };
    const bridge = bridgeOver(gateway, hub);
    const root = 'agent:main:main';
    expect((await bridge.watchTree(first, root))?.rootKey).toBe(root);
    await bridge.watchTree(second, root);
    treeCalls.length = 0;
    const trees = () => sent.filter((s) => s.frame.type === 'tree');

    for (const listener of listeners) {
      listener({
        type: 'run.tool',
        runId: 'r',
        sessionKey: 'agent:main:subagent:x',
        toolName: 't',
        toolCallId: 'c',
      });
    }
    await expect.poll(() => trees().length).toBe(2);
    expect(treeCalls).toEqual([root]);
    expect(trees().map((s) => s.to)).toEqual([first, second]);

    await bridge.watchTree(first, undefined);
    hub.leave(second);
    sent.length = 0;
    treeCalls.length = 0;
    hub.join(owner('o3'));
    for (const listener of listeners) {
      listener({ type: 'run.ended', runId: 'r', sessionKey: 'agent:main:subagent:x', status: 'done' });
    }
    await expect.poll(() => sent.some((s) => s.frame.type === 'sessions')).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(trees()).toEqual([]);
    expect(treeCalls).toEqual([]);
    bridge.close();
  });
});
