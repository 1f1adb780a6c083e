import { resolveConfig } from '@colloquy/core';
import { type Gateway, MCP_SCOPES } from '@colloquy/core/gateway';
import { Client } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import { type McpStdioServer, serveMcpStdio } from '../../src/mcp/index.js';
import { type Harness, startHarness } from '../support/harness.js';

const STDIO_CLIENT = { agentId: 'main', name: 'desktop', scopes: MCP_SCOPES, visibility: 'tree' } as const;

/** Serves `gateway` (default: the harness's) over an in-memory stdio-like link; returns the client's end. */
function serveLinked(
  harness: Harness,
  gateway: Gateway = harness.runtime.gateway,
): ReturnType<typeof InMemoryTransport.createLinkedPair>[0] {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  served = serveMcpStdio({
    gateway,
    config: resolveConfig({ agents: { defaults: { model: 'scripted/test' } } }),
    client: { ...STDIO_CLIENT, scopes: [...STDIO_CLIENT.scopes] },
    transport: serverSide,
  });
  return clientSide;
}

/** Resolves on the next call of the returned callback. */
function nextCall(): { called: Promise<void>; call: () => void } {
  let call!: () => void;
  const called = new Promise<void>((resolve) => {
    call = resolve;
  });
  return { called, call };
}

async function readEvents(read: (params: { uri: string }) => Promise<{ contents: unknown[] }>) {
  const { contents } = await read({ uri: 'colloquy://events' });
  return JSON.parse((contents[0] as { text: string }).text) as { count: number; events: { kind: string }[] };
}

let h: Harness | undefined;
let served: McpStdioServer | undefined;

afterEach(async () => {
  await served?.close();
  await h?.close();
  served = undefined;
  h = undefined;
});

describe('MCP over a stdio transport', () => {
  it('serves the same tools as /mcp, acting as the client session of its name', async () => {
    h = await startHarness({ script: () => 'done' });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    served = serveMcpStdio({
      gateway: h.runtime.gateway,
      config: resolveConfig({ agents: { defaults: { model: 'scripted/test' } } }),
      client: { agentId: 'main', name: 'desktop', scopes: MCP_SCOPES, visibility: 'tree' },
      transport: serverSide,
    });
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(clientSide);
    expect((await client.listTools()).tools).toHaveLength(9);
    const spawned = await client.callTool({ name: 'sessions_spawn', arguments: { task: 'work' } });
    expect(spawned.structuredContent).toMatchObject({ status: 'accepted' });
    const child = await h.store.getSession(
      (spawned.structuredContent as { childSessionKey: string }).childSessionKey,
    );
    expect(child?.spawnedBy).toBe('agent:main:mcp:desktop');
    const waited = await client.callTool({ name: 'events_wait', arguments: { timeoutSeconds: 10 } });
    expect(waited.structuredContent).toMatchObject({ count: 1, events: [{ kind: 'announce' }] });
    await client.close();
  });

  it('pushes resources/updated to a 2025-era client subscribed to colloquy://events; reading leaves the event for events_wait', async () => {
    h = await startHarness({ script: () => 'done' });
    const client = new ClientV1({ name: 'legacy', version: '1.0.0' });
    await client.connect(serveLinked(h));
    const updated = nextCall();
    const uris: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
      uris.push(notification.params.uri);
      updated.call();
    });
    expect(client.getServerCapabilities()?.resources).toMatchObject({ subscribe: true });
    expect(await readEvents((p) => client.readResource(p))).toEqual({ events: [], count: 0 });
    await client.subscribeResource({ uri: 'colloquy://events' });
    await client.callTool({ name: 'sessions_spawn', arguments: { task: 'work' } });
    await updated.called;
    expect(uris).toEqual(['colloquy://events']);
    expect(await readEvents((p) => client.readResource(p))).toMatchObject({
      count: 1,
      events: [{ kind: 'announce' }],
    });
    const taken = await client.callTool({ name: 'events_wait', arguments: { timeoutSeconds: 0 } });
    expect(taken.structuredContent).toMatchObject({ count: 1, events: [{ kind: 'announce' }] });
    expect(await readEvents((p) => client.readResource(p))).toEqual({ events: [], count: 0 });
    await expect(client.subscribeResource({ uri: 'colloquy://elsewhere' })).rejects.toThrow();
    await client.close();
  });

  it('tells a 2025-era client of events only after it subscribed', async () => {
    h = await startHarness({ script: () => 'done' });
    const inner = h.runtime.gateway;
    // The watcher's looks at the inbox, each with the newest entry it had seen before it.
    const looks: (string | undefined)[] = [];
    const looked = new Set<() => void>();
    const watched: Gateway = {
      call(method, params) {
        if (method === 'mcp.pending') {
          looks.push((params as { newestId?: string }).newestId);
          for (const wake of looked) wake();
        }
        return inner.call(method, params);
      },
    };
    const lookedPast = (id: string) =>
      new Promise<void>((resolve) => {
        const check = () => {
          if (!looks.includes(id)) return;
          looked.delete(check);
          resolve();
        };
        looked.add(check);
        check();
      });
    const client = new ClientV1({ name: 'legacy', version: '1.0.0' });
    await client.connect(serveLinked(h, watched));
    const updated = nextCall();
    let notifications = 0;
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, () => {
      notifications += 1;
      updated.call();
    });
    await client.callTool({ name: 'sessions_spawn', arguments: { task: 'first' } });
    const { newestId } = await inner.call('mcp.pending', {
      sessionKey: 'agent:main:mcp:desktop',
      waitForChange: true,
      timeoutMs: 10_000,
    });
    // Once the watcher looks again knowing the announce, it has decided about it; a round trip
    // then flushes anything it sent before.
    await lookedPast(newestId!);
    await client.listTools();
    expect(notifications).toBe(0);
    await client.subscribeResource({ uri: 'colloquy://events' });
    await client.callTool({ name: 'sessions_spawn', arguments: { task: 'second' } });
    await updated.called;
    expect(notifications).toBe(1);
    await client.close();
  });

  it('pushes the update on a subscriptions/listen stream of a 2026-era client', async () => {
    h = await startHarness({ script: () => 'done' });
    const client = new Client(
      { name: 'current', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await client.connect(serveLinked(h));
    const updated = nextCall();
    const uris: string[] = [];
    client.setNotificationHandler('notifications/resources/updated', (notification) => {
      uris.push(notification.params.uri);
      updated.call();
    });
    const subscription = await client.listen({ resourceSubscriptions: ['colloquy://events'] });
    await client.callTool({ name: 'sessions_spawn', arguments: { task: 'work' } });
    await updated.called;
    expect(uris).toEqual(['colloquy://events']);
    expect(await readEvents((p) => client.readResource(p))).toMatchObject({ count: 1 });
    await subscription.close();
    await client.close();
  });
});
