import { connect, createServer, type Server, type Socket } from 'node:net';
import { isColloquyError } from '@colloquy/core';
import type { GatewayEvent } from '@colloquy/core/gateway';
import { makeSessionRecord } from '@colloquy/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import {
  createGatewayClient,
  type GatewayClient,
  type GatewayServer,
  startGatewayServer,
} from '../src/index.js';
import { type Harness, type HarnessOptions, startHarness, waitFor } from './support/harness.js';

const TOKEN = 'test-token-123456';
const GROUP = 'agent:main:memory:group:g1';

let h: Harness | undefined;
let server: GatewayServer | undefined;
let client: GatewayClient | undefined;
let proxy: Proxy | undefined;
const sockets: WebSocket[] = [];

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.terminate();
  await client?.close();
  await proxy?.close();
  await server?.close();
  await h?.close();
  client = undefined;
  proxy = undefined;
  server = undefined;
  h = undefined;
});

async function boot(
  script: HarnessOptions['script'] = () => 'ok',
  maxFrameBytes?: number,
  config?: HarnessOptions['config'],
) {
  h = await startHarness({ script, ...(config ? { config } : {}) });
  server = await startGatewayServer({
    gateway: h.runtime.gateway,
    token: TOKEN,
    port: 0,
    ...(maxFrameBytes ? { maxFrameBytes } : {}),
  });
  return { h, server };
}

/** A raw socket plus a queue of the frames it received. */
async function rawSocket(url: string, headers: Record<string, string> = {}) {
  const socket = new WebSocket(url, { headers });
  sockets.push(socket);
  const frames: Record<string, unknown>[] = [];
  let closed: { code: number; reason: string } | undefined;
  socket.on('message', (data) => frames.push(JSON.parse(data.toString()) as Record<string, unknown>));
  socket.on('close', (code, reason) => {
    closed = { code, reason: reason.toString() };
  });
  socket.on('error', () => {});
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  return {
    socket,
    frames,
    closed: () => closed,
    send: (value: unknown) => socket.send(typeof value === 'string' ? value : JSON.stringify(value)),
  };
}

describe('gateway over WebSocket', () => {
  it('binds to 127.0.0.1 by default and refuses unauthenticated frames with close code 4401', async () => {
    await boot();
    expect(server!.host).toBe('127.0.0.1');
    const raw = await rawSocket(server!.url);
    raw.send({ id: 1, method: 'sessions.list', params: {} });
    await waitFor(() => raw.closed() !== undefined);
    expect(raw.frames[0]).toMatchObject({ id: 1, ok: false, error: { code: 'UNAUTHORIZED' } });
    expect(raw.closed()).toEqual({ code: 4401, reason: 'unauthorized' });
  });

  it('refuses a wrong bearer token at the upgrade and a wrong token in the auth frame', async () => {
    await boot();
    client = createGatewayClient({ url: server!.url, token: 'wrong-token', reconnect: false });
    const error = await client.ready().catch((e: unknown) => e);
    expect(isColloquyError(error) && error.code).toBe('UNAUTHORIZED');
    const raw = await rawSocket(server!.url);
    raw.send({ id: 'a', method: 'auth', params: { token: 'nope' } });
    await waitFor(() => raw.closed() !== undefined);
    expect(raw.closed()?.code).toBe(4401);
  });

  it('accepts a token in the first frame, answers invalid JSON with an error and keeps the connection', async () => {
    await boot();
    const raw = await rawSocket(server!.url);
    raw.send({ id: 1, method: 'auth', params: { token: TOKEN } });
    raw.send('{not json');
    raw.send({ id: 2, method: 'agents.list', params: {} });
    raw.send({ id: 3, method: 'no.such.method' });
    await waitFor(() => raw.frames.length === 4);
    const byId = (id: unknown) => raw.frames.find((f) => f.id === id);
    expect(byId(1)).toEqual({ id: 1, ok: true, result: { authenticated: true } });
    expect(byId(null)).toMatchObject({
      ok: false,
      error: { code: 'INVALID_ARGUMENT', message: expect.stringContaining('JSON') },
    });
    expect(byId(2)).toMatchObject({ ok: true, result: { agents: [{ id: 'main' }] } });
    expect(byId(3)).toMatchObject({ ok: false, error: { code: 'NOT_SUPPORTED' } });
    expect(raw.closed()).toBeUndefined();
  });

  it('closes a connection that sends a frame over the size limit with 1009', async () => {
    await boot(undefined, 1024);
    const raw = await rawSocket(server!.url, { authorization: `Bearer ${TOKEN}` });
    raw.send({ id: 1, method: 'agent', params: { sessionKey: 'main', message: 'x'.repeat(4096) } });
    await waitFor(() => raw.closed() !== undefined);
    expect(raw.closed()?.code).toBe(1009);
  });

  it('round-trips every gateway method through the typed client', async () => {
    await boot(['reply one']);
    h!.store.putSession(
      makeSessionRecord(GROUP, {
        kind: 'group',
        chatType: 'group',
        deliveryContext: { channel: 'memory', to: 'g1', accountId: 'default' },
      }),
    );
    client = createGatewayClient({ url: server!.url, token: TOKEN });
    await client.ready();
    const g = client;
    expect((await g.call('sessions.list', { kinds: ['group'] })).sessions.map((s) => s.key)).toEqual([GROUP]);
    expect((await g.call('sessions.resolve', { key: GROUP })).session.key).toBe(GROUP);
    expect((await g.call('sessions.patch', { key: GROUP, patch: { label: 'ops' } })).session.label).toBe(
      'ops',
    );
    expect(await g.call('chat.send', { key: GROUP, text: 'over the wire' })).toMatchObject({
      status: 'delivered',
    });
    expect((await g.call('chat.history', { key: GROUP })).messages.map((m) => m.content)).toEqual([
      'over the wire',
    ]);
    const { runId } = await g.call('agent', { sessionKey: 'main', message: 'hi' });
    expect(await g.call('agent.wait', { runId, timeoutMs: 3000 })).toMatchObject({
      status: 'done',
      reply: 'reply one',
    });
    expect(await g.call('agent.recordAnnounce', { runId, outcome: { outcome: 'skipped', at: 1 } })).toEqual({
      runId,
    });
    expect(await g.call('agent.abort', { runId })).toEqual({ aborted: [] });
    expect((await g.call('agents.list', {})).agents[0]?.id).toBe('main');
    expect((await g.call('session.status', { key: 'main' })).status).toBe('done');
    expect(await g.call('sessions.delete', { key: GROUP })).toEqual({ deleted: true });
    const missing = await g.call('sessions.resolve', { key: GROUP }).catch((e: unknown) => e);
    expect(isColloquyError(missing) && missing.code).toBe('SESSION_NOT_FOUND');
  });

  it('serves watching over the wire: session.status with changesSince, agent with watchBy', async () => {
    // main may see the group (visibility agent): a watch by a session that may not see its target
    // is refused, and dropped if it comes to fire after visibility narrowed.
    await boot(['reply one', 'reply two'], undefined, { tools: { sessions: { visibility: 'agent' } } });
    await h!.store.putSession(makeSessionRecord(GROUP, { kind: 'group', chatType: 'group' }));
    client = createGatewayClient({ url: server!.url, token: TOKEN });
    await client.ready();
    const { runId } = await client.call('agent', { sessionKey: 'main', message: 'hi' });
    await client.call('agent.wait', { runId, timeoutMs: 3000 });
    const queued = await client.call('agent', {
      sessionKey: GROUP,
      message: 'watched',
      deliver: false,
      watchBy: 'agent:main:main',
    });
    expect(queued.watching).toEqual({ sinceVersion: 0 });
    await client.call('agent.wait', { runId: queued.runId, timeoutMs: 3000 });
    const status = await client.call('session.status', { key: GROUP, changesSince: 0 });
    expect(status.stateVersion).toBe(4);
    expect(status.changes?.changes).toEqual({ message: 2, status: 2, patch: 0 });
    const refused = await client
      .call('session.status', { key: GROUP, changesSince: 1.5 })
      .catch((e: unknown) => e);
    expect(isColloquyError(refused) && refused.code).toBe('INVALID_ARGUMENT');
    await waitFor(
      async () => (await h!.store.readTail('agent:main:main', 20)).some((m) => m.details?.watch),
      3000,
      'the watch notice in main',
    );
  });

  it('pushes events to subscribers', async () => {
    await boot(['streamed']);
    client = createGatewayClient({ url: server!.url, token: TOKEN });
    const events: GatewayEvent[] = [];
    client.subscribe((e) => events.push(e));
    await client.ready();
    const { runId } = await client.call('agent', { sessionKey: 'main', message: 'hi' });
    await client.call('agent.wait', { runId, timeoutMs: 3000 });
    await waitFor(() => events.some((e) => e.type === 'run.ended'));
    expect(events.filter((e) => 'runId' in e && e.runId === runId).map((e) => e.type)).toEqual([
      'run.queued',
      'run.started',
      'run.delta',
      'run.ended',
    ]);
  });

  it('agent.wait survives a client reconnect, and events resume after it', async () => {
    await boot([{ text: 'slow answer', delayMs: 400 }, 'second']);
    proxy = await startProxy(server!.port);
    client = createGatewayClient({
      url: `ws://127.0.0.1:${proxy.port}`,
      token: TOKEN,
      reconnect: { initialDelayMs: 20 },
    });
    const events: GatewayEvent[] = [];
    client.subscribe((e) => events.push(e));
    await client.ready();
    const { runId } = await client.call('agent', { sessionKey: 'main', message: 'hi' });
    const waiting = client.call('agent.wait', { runId, timeoutMs: 5000 });
    await h!.model.waitForRequests(1);
    proxy.cutAll();
    const result = await waiting;
    expect(result).toMatchObject({ runId, status: 'done', reply: 'slow answer', waitTimedOut: false });
    expect(proxy.connections).toBeGreaterThanOrEqual(2);
    const second = await client.call('agent', { sessionKey: 'main', message: 'again' });
    await client.call('agent.wait', { runId: second.runId, timeoutMs: 3000 });
    await waitFor(() => events.some((e) => e.type === 'run.ended' && e.runId === second.runId));
  });

  it('tells a client without reconnect that the server closed the connection, and why it stays closed', async () => {
    await boot();
    client = createGatewayClient({ url: server!.url, token: TOKEN, reconnect: false });
    await client.ready();
    await server!.close();
    server = undefined;
    await waitFor(() => client!.state === 'closed');
    const error = await client.call('agents.list', {}).catch((e: unknown) => e);
    expect(isColloquyError(error) && error.code).toBe('ABORTED');
    expect(isColloquyError(error) && error.details.reason).toBe('closed');
    expect((error as Error).message).toMatch(
      /^The gateway closed the connection \(WebSocket code \d+\): the server stopped/,
    );
    expect((error as Error).message).toContain('without the reconnect option');
  });

  it('fails a non-repeatable call cut by a disconnect with ABORTED instead of sending it twice', async () => {
    await boot();
    h!.store.putSession(
      makeSessionRecord(GROUP, {
        kind: 'group',
        deliveryContext: { channel: 'memory', to: 'g1', accountId: 'default' },
      }),
    );
    proxy = await startProxy(server!.port, { holdClientData: true });
    client = createGatewayClient({
      url: `ws://127.0.0.1:${proxy.port}`,
      token: TOKEN,
      reconnect: { initialDelayMs: 20 },
    });
    await client.ready();
    const heldBefore = proxy.heldChunks;
    const sending = client.call('chat.send', { key: GROUP, text: 'maybe' });
    // Cut once the call is on the wire (the proxy swallowed it), not before the client sent it.
    await waitFor(() => proxy!.heldChunks > heldBefore, 3000, 'the call’s frame at the proxy');
    proxy.cutAll();
    const error = await sending.catch((e: unknown) => e);
    expect(isColloquyError(error) && error.code).toBe('ABORTED');
  });
});

interface Proxy {
  port: number;
  connections: number;
  /** Client chunks swallowed by `holdClientData`. */
  heldChunks: number;
  cutAll(): void;
  close(): Promise<void>;
}

/** A TCP proxy in front of the server that the test can cut, to force a reconnect. */
async function startProxy(target: number, options: { holdClientData?: boolean } = {}): Promise<Proxy> {
  const open = new Set<Socket>();
  let hold = options.holdClientData ?? false;
  const state = { connections: 0, heldChunks: 0 };
  const net: Server = createServer((inbound) => {
    state.connections++;
    const out = connect(target, '127.0.0.1');
    open.add(inbound);
    open.add(out);
    let handshakeDone = false;
    inbound.on('data', (chunk) => {
      // With holdClientData, frames after the handshake are swallowed (the call never reaches the server).
      if (hold && handshakeDone) {
        state.heldChunks++;
        return;
      }
      handshakeDone = true;
      out.write(chunk);
    });
    out.on('data', (chunk) => inbound.write(chunk));
    const close = () => {
      inbound.destroy();
      out.destroy();
      open.delete(inbound);
      open.delete(out);
    };
    inbound.on('close', close);
    out.on('close', close);
    inbound.on('error', close);
    out.on('error', close);
  });
  await new Promise<void>((resolve) => net.listen(0, '127.0.0.1', resolve));
  const port = (net.address() as { port: number }).port;
  return {
    port,
    get connections() {
      return state.connections;
    },
    get heldChunks() {
      return state.heldChunks;
    },
    cutAll() {
      hold = false;
      for (const socket of open) socket.destroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        net.close(() => resolve());
      }),
  };
}
