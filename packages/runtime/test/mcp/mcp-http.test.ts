import { readFileSync } from 'node:fs';
import type { SessionVisibility } from '@colloquy/core';
import { issueMcpToken, type McpScope, mcpTokenStore } from '@colloquy/core/gateway';
import { MemoryStore } from '@colloquy/core/store';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { type Harness, startHarness, waitFor } from '../support/harness.js';

const GATEWAY_TOKEN = 'gateway-token-123456';
const RUNTIME_PACKAGE = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

let h: Harness | undefined;
const clients: Client[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) await client.close().catch(() => undefined);
  await h?.close();
  h = undefined;
});

async function boot(visibility: SessionVisibility = 'agent') {
  h = await startHarness({
    script: (request) =>
      request.messages.some((m) => m.role === 'user' && JSON.stringify(m.content).includes('ping'))
        ? 'pong'
        : 'done',
    config: { gateway: { token: GATEWAY_TOKEN, port: 0 }, tools: { sessions: { visibility } } },
    serve: true,
  });
  return h;
}

async function token(scopes: McpScope[], visibility: SessionVisibility = 'tree', name = 'laptop') {
  const issued = issueMcpToken({ agentId: 'main', name, scopes, visibility });
  await mcpTokenStore(h!.store).putMcpToken(issued.record);
  return issued;
}

function mcpUrl(): URL {
  return new URL(`http://127.0.0.1:${h!.runtime.server!.port}/mcp`);
}

async function connect(bearer: string): Promise<Client> {
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(mcpUrl(), {
      requestInit: { headers: { authorization: `Bearer ${bearer}` } },
    }),
  );
  clients.push(client);
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown>) {
  const result = await client.callTool({ name, arguments: args });
  return { ...result, details: result.structuredContent as Record<string, unknown> };
}

describe('MCP over Streamable HTTP at /mcp', () => {
  it('reports the runtime version, lists the session tools and events_wait, and answers sessions_list as the session tool does', async () => {
    await boot();
    const { token: bearer } = await token(['read']);
    const client = await connect(bearer);
    expect(client.getServerVersion()).toEqual({ name: 'colloquy', version: RUNTIME_PACKAGE.version });
    const names = (await client.listTools()).tools.map((t) => t.name).sort();
    expect(names).toEqual([
      'agents_list',
      'events_wait',
      'session_status',
      'sessions_history',
      'sessions_list',
      'sessions_search',
      'sessions_send',
      'sessions_spawn',
      'subagents',
    ]);
    const listed = await call(client, 'sessions_list', {});
    expect(listed.isError).toBeFalsy();
    expect(listed.details).toMatchObject({ count: expect.any(Number), sessions: expect.any(Array) });
  });

  it('refuses a request without a token, with an unknown one and with a revoked one (401)', async () => {
    await boot();
    const { token: bearer, record } = await token(['read']);
    const init = {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{}',
    };
    expect((await fetch(mcpUrl(), init)).status).toBe(401);
    const wrong = await fetch(mcpUrl(), {
      ...init,
      headers: { ...init.headers, authorization: 'Bearer colloquy_mcp_nope' },
    });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toContain('invalid_token');
    await connect(bearer);
    await mcpTokenStore(h!.store).revokeMcpToken(record.id, Date.now());
    await expect(connect(bearer)).rejects.toThrow();
  });

  it('answers 403 insufficient_scope to a token without spawn, and runs nothing', async () => {
    await boot();
    const { token: bearer } = await token(['read', 'send']);
    const client = await connect(bearer);
    await expect(call(client, 'sessions_spawn', { task: 'x' })).rejects.toThrow(
      /403|insufficient_scope|scope/i,
    );
    expect(await h!.store.listSessions({ kinds: ['subagent'] })).toEqual([]);
    expect((await call(client, 'subagents', { action: 'list' })).isError).toBeFalsy();
  });

  it('serves colloquy://events to a token with read, and refuses one without (403)', async () => {
    await boot();
    const reader = await connect((await token(['read'])).token);
    const { contents } = await reader.readResource({ uri: 'colloquy://events' });
    expect(JSON.parse((contents[0] as { text: string }).text)).toEqual({ events: [], count: 0 });
    const sender = await connect((await token(['send'], 'tree', 'sender')).token);
    await expect(sender.readResource({ uri: 'colloquy://events' })).rejects.toThrow(
      /403|insufficient_scope|scope/i,
    );
  });

  it('refuses a browser Origin that is not allowed (403), before any token check', async () => {
    await boot();
    const response = await fetch(mcpUrl(), {
      method: 'POST',
      headers: { origin: 'https://evil.example', 'content-type': 'application/json' },
      body: '{}',
    });
    expect(response.status).toBe(403);
  });

  it('answers a hidden target exactly as a missing one', async () => {
    await boot('agent');
    const { token: bearer } = await token(['read', 'send'], 'tree');
    const client = await connect(bearer);
    await h!.runtime.gateway.call('agent', { sessionKey: 'main', message: 'hello' });
    const hidden = await call(client, 'sessions_history', { sessionKey: 'agent:main:main' });
    const missing = await call(client, 'sessions_history', { sessionKey: 'agent:main:nowhere' });
    expect(hidden.details.status).toBe('forbidden');
    expect(hidden.content).toEqual(missing.content);
    const sendHidden = await call(client, 'sessions_send', { sessionKey: 'agent:main:main', message: 'x' });
    const sendMissing = await call(client, 'sessions_send', {
      sessionKey: 'agent:main:nowhere',
      message: 'x',
    });
    expect(sendHidden.content).toEqual(sendMissing.content);
  });

  it('sends with a wait, keeping the traceparent on the run', async () => {
    await boot('agent');
    const { token: bearer } = await token(['read', 'send'], 'agent');
    const client = await connect(bearer);
    const first = await h!.runtime.gateway.call('agent', { sessionKey: 'main', message: 'hello' });
    await h!.runtime.gateway.call('agent.wait', { runId: first.runId, timeoutMs: 5000 });
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const sent = await client.callTool({
      name: 'sessions_send',
      arguments: { sessionKey: 'main', message: 'ping', timeoutSeconds: 10 },
      _meta: { traceparent },
    });
    const details = sent.structuredContent as { status: string; reply: string; runId: string };
    expect(details).toMatchObject({ status: 'ok', reply: 'pong' });
    expect((await h!.store.getRun(details.runId))?.meta).toMatchObject({ traceparent });
    // The client is no model: the exchange skips the reply-back turns and goes to the announce step,
    // which main (no chat) skips; it never fails trying to run a turn in the client's session.
    await waitFor(async () => (await h!.store.getRun(details.runId))?.announce !== undefined, 10_000);
    expect((await h!.store.getRun(details.runId))?.announce).toMatchObject({ outcome: 'skipped' });
  });

  it('spawns a sub-agent and returns its announce once from events_wait', async () => {
    await boot();
    const { token: bearer } = await token(['read', 'spawn']);
    const client = await connect(bearer);
    const spawned = await call(client, 'sessions_spawn', { task: 'count to three', label: 'counter' });
    expect(spawned.details).toMatchObject({ status: 'accepted' });
    const waited = await call(client, 'events_wait', { timeoutSeconds: 10 });
    expect(waited.details).toMatchObject({ count: 1, events: [{ kind: 'announce' }] });
    expect((waited.details.events as Array<{ text: string }>)[0]!.text).toContain('done');
    const again = await call(client, 'events_wait', { timeoutSeconds: 0 });
    expect(again.details).toMatchObject({ count: 0, events: [] });
    const listed = await call(client, 'sessions_list', {});
    expect((listed.details.sessions as Array<{ key: string }>).map((s) => s.key)).toContain(
      spawned.details.childSessionKey,
    );
  });

  it("returns a watched session's change notice from events_wait", async () => {
    await boot('agent');
    const { token: bearer } = await token(['read', 'send'], 'agent');
    const client = await connect(bearer);
    const first = await h!.runtime.gateway.call('agent', { sessionKey: 'main', message: 'hello' });
    await h!.runtime.gateway.call('agent.wait', { runId: first.runId, timeoutMs: 5000 });
    const sent = await call(client, 'sessions_send', {
      sessionKey: 'main',
      message: 'ping',
      timeoutSeconds: 0,
      watch: true,
    });
    expect(sent.details).toMatchObject({ status: 'accepted' });
    const waited = await call(client, 'events_wait', { timeoutSeconds: 10 });
    expect(waited.details).toMatchObject({ count: 1, events: [{ kind: 'watch' }] });
  });

  it('answers 503 naming the missing calls when the store keeps no MCP tokens', async () => {
    const store = new MemoryStore();
    // A third-party store written before the token calls existed.
    Object.assign(store, {
      putMcpToken: undefined,
      getMcpTokenByHash: undefined,
      listMcpTokens: undefined,
      revokeMcpToken: undefined,
    });
    h = await startHarness({ store, config: { gateway: { token: GATEWAY_TOKEN, port: 0 } }, serve: true });
    const response = await fetch(mcpUrl(), {
      method: 'POST',
      headers: { authorization: 'Bearer x' },
      body: '{}',
    });
    expect(response.status).toBe(503);
    expect(((await response.json()) as { error_description: string }).error_description).toContain(
      'missing putMcpToken, getMcpTokenByHash, listMcpTokens, revokeMcpToken',
    );
  });
});
