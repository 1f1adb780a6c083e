import { type OpenAIFake, startOpenAIFake } from '@colloquy/testkit/openai-fake';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as StreamableHTTPClientTransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AppProcess, CLI, childEnv, runCliProcess, startApp } from './support/app-process.js';

// The MCP server of the reference app, through the SDK's own clients: v2 and a 1.x client
// (@modelcontextprotocol/sdk), against `colloquy start` with the OpenAI fake as its model.

let fake: OpenAIFake;
let app: AppProcess;
const open: Array<{ close(): Promise<void> }> = [];

const cli = (...args: string[]) => runCliProcess([...args, '--state-dir', 'state'], { cwd: app.dir });

/** `colloquy mcp token create`, returning the token it printed (its first line). */
async function createToken(name: string, scopes: string, visibility = 'agent'): Promise<string> {
  const run = await cli(
    'mcp',
    'token',
    'create',
    '--name',
    name,
    '--scopes',
    scopes,
    '--visibility',
    visibility,
  );
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  return run.stdout.split('\n')[0]!.trim();
}

const mcpUrl = () => new URL('/mcp', app.gatewayUrl.replace(/^ws:/, 'http:'));
const bearer = (token: string) => ({ requestInit: { headers: { authorization: `Bearer ${token}` } } });

async function connect(token: string): Promise<Client> {
  const client = new Client({ name: 'proof-v2', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(mcpUrl(), bearer(token)));
  open.push(client);
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown>) {
  const result = await client.callTool({ name, arguments: args });
  return result.structuredContent as Record<string, unknown>;
}

beforeAll(async () => {
  fake = await startOpenAIFake((request) => {
    const messages = request.body.messages as { role: string; content: unknown }[];
    const last = messages.filter((m) => m.role === 'user').at(-1);
    return {
      text: [
        'pong: ',
        String(last?.content ?? '')
          .replace(/^\[[^\]]*\]\s*/, '')
          .slice(0, 40),
      ],
    };
  });
  app = await startApp(
    { tools: { sessions: { visibility: 'agent' } } },
    { COLLOQUY_MODEL: 'fake/test-model', OPENAI_BASE_URL: fake.baseURL },
  );
  // The main session exists once it has had a turn.
  expect((await cli('sessions', 'send', 'main', 'hello')).code).toBe(0);
}, 60_000);

afterAll(async () => {
  for (const client of open.splice(0)) await client.close().catch(() => undefined);
  await app?.cleanup();
  await fake?.close();
});

describe('Colloquy as an MCP server, through the SDK clients', () => {
  it('v2 client: lists the tools, lists sessions, and sends to main waiting for the reply', async () => {
    const client = await connect(await createToken('laptop', 'read,send,spawn'));
    const tools = (await client.listTools()).tools.map((t) => t.name);
    expect(tools).toEqual(
      expect.arrayContaining(['sessions_list', 'sessions_send', 'sessions_spawn', 'events_wait']),
    );
    const listed = await call(client, 'sessions_list', {});
    expect((listed.sessions as Array<{ key: string }>).map((s) => s.key)).toContain('main');
    const sent = await call(client, 'sessions_send', {
      sessionKey: 'main',
      message: 'ping from mcp',
      timeoutSeconds: 20,
    });
    expect(sent).toMatchObject({ status: 'ok', reply: expect.stringContaining('pong:') });
  });

  it('v2 client: a spawned sub-agent announces to the client through events_wait', async () => {
    const client = await connect(await createToken('spawner', 'read,spawn'));
    const spawned = await call(client, 'sessions_spawn', { task: 'summarise nothing', label: 'worker' });
    expect(spawned).toMatchObject({
      status: 'accepted',
      childSessionKey: expect.stringMatching(/^agent:main:subagent:/),
    });
    const waited = await call(client, 'events_wait', { timeoutSeconds: 30 });
    expect(waited).toMatchObject({ count: 1, events: [{ kind: 'announce' }] });
    expect((waited.events as Array<{ text: string }>)[0]!.text).toContain('pong:');
  });

  it('answers a hidden target exactly as a missing one', async () => {
    const client = await connect(await createToken('narrow', 'read,send', 'tree'));
    for (const tool of ['sessions_history', 'session_status', 'sessions_send'] as const) {
      const args = (key: string) =>
        tool === 'sessions_send' ? { sessionKey: key, message: 'x' } : { sessionKey: key };
      const hidden = await client.callTool({ name: tool, arguments: args('agent:main:main') });
      const missing = await client.callTool({ name: tool, arguments: args('agent:main:no-such-session') });
      expect(hidden.structuredContent).toMatchObject({ status: 'forbidden' });
      expect(hidden.content).toEqual(missing.content);
    }
  });

  it('refuses a revoked token, and answers a token without spawn 403 for sessions_spawn', async () => {
    const token = await createToken('revoked', 'read');
    await connect(token);
    expect((await cli('mcp', 'token', 'revoke', 'revoked')).code).toBe(0);
    await expect(connect(token)).rejects.toThrow();
    const readOnly = await connect(await createToken('reader', 'read,send'));
    await expect(readOnly.callTool({ name: 'sessions_spawn', arguments: { task: 'x' } })).rejects.toThrow(
      /insufficient.scope|403/i,
    );
    const raw = await fetch(mcpUrl(), {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    expect(raw.status).toBe(401);
  });

  it('refuses a request from a browser Origin that is not allowed', async () => {
    const response = await fetch(mcpUrl(), {
      method: 'POST',
      headers: { origin: 'https://attacker.example', 'content-type': 'application/json' },
      body: '{}',
    });
    expect(response.status).toBe(403);
  });

  it('a 1.x client (@modelcontextprotocol/sdk) lists the tools and sends with a wait', async () => {
    const client = new ClientV1({ name: 'proof-v1', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransportV1(mcpUrl(), bearer(await createToken('legacy', 'read,send'))),
    );
    open.push(client);
    expect((await client.listTools()).tools).toHaveLength(9);
    const listed = await client.callTool({ name: 'sessions_list', arguments: {} });
    expect(JSON.parse((listed.content as Array<{ text: string }>)[0]!.text)).toMatchObject({
      count: expect.any(Number),
    });
    const sent = await client.callTool({
      name: 'sessions_send',
      arguments: { sessionKey: 'main', message: 'ping from v1', timeoutSeconds: 20 },
    });
    expect(sent.structuredContent).toMatchObject({ status: 'ok', reply: expect.stringContaining('pong:') });
  });

  it('colloquy mcp serve serves the same tools over stdio with the admin credentials', async () => {
    const client = new Client({ name: 'proof-stdio', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [CLI, 'mcp', 'serve', '--name', 'desktop', '--state-dir', 'state'],
        cwd: app.dir,
        // The same environment as the bot's, so the tools read the same config (its model).
        env: childEnv({ COLLOQUY_MODEL: 'fake/test-model', OPENAI_BASE_URL: fake.baseURL }) as Record<
          string,
          string
        >,
        stderr: 'pipe',
      }),
    );
    open.push(client);
    expect((await client.listTools()).tools).toHaveLength(9);
    const spawned = await client.callTool({ name: 'sessions_spawn', arguments: { task: 'from stdio' } });
    expect(spawned.structuredContent, JSON.stringify(spawned.structuredContent)).toMatchObject({
      status: 'accepted',
    });
    const status = await client.callTool({ name: 'session_status', arguments: {} });
    expect(status.structuredContent).toMatchObject({ sessionKey: 'agent:main:mcp:desktop' });
    const announced = await client.callTool({ name: 'events_wait', arguments: { timeoutSeconds: 30 } });
    expect(announced.structuredContent).toMatchObject({ count: 1, events: [{ kind: 'announce' }] });
    // A wait longer than the CLI's gateway request timeout (15 s) ends empty, not in an error.
    const idle = await client.callTool({ name: 'events_wait', arguments: { timeoutSeconds: 17 } });
    expect(idle.isError).toBeFalsy();
    expect(idle.structuredContent).toEqual({ events: [], count: 0 });
  }, 60_000);
});
