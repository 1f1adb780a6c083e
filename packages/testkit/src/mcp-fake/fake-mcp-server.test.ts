import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeMcpHttpServer, startFakeMcpHttpServer } from './http-host.js';

// The stdio program runs from the build (the test task builds the package first).
const STDIO_PROGRAM = fileURLToPath(new URL('../../dist/mcp-fake/stdio-host.js', import.meta.url));

const text = (result: { content?: unknown }) =>
  ((result.content as { type: string; text?: string }[] | undefined) ?? [])
    .map((block) => block.text)
    .join('');

describe('the fake MCP server over Streamable HTTP', () => {
  let fake: FakeMcpHttpServer | undefined;
  let client: Client | undefined;
  afterEach(async () => {
    await client?.close().catch(() => {});
    await fake?.close();
    client = undefined;
    fake = undefined;
  });

  it('returns 10 MiB from big', async () => {
    fake = await startFakeMcpHttpServer();
    client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(fake.url)));
    expect(text(await client.callTool({ name: 'big', arguments: {} }))).toHaveLength(10 * 1024 * 1024);
  });

  it('lists its tools and answers an added tool through the SDK client', async () => {
    fake = await startFakeMcpHttpServer({ tools: [{ name: 'weather', run: () => ({ text: 'sunny' }) }] });
    client = new Client({ name: 'test', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(new URL(fake.url)));
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(
      ['add_tool', 'big', 'crash', 'echo', 'fail', 'hang', 'remove_tool', 'weather'].sort(),
    );
    expect(text(await client.callTool({ name: 'weather', arguments: {} }))).toBe('sunny');
    expect(fake.calls).toEqual([{ tool: 'weather', arguments: {} }]);
  });

  it('announces a changed tool list to a subscribed client', async () => {
    fake = await startFakeMcpHttpServer();
    const changes: string[][] = [];
    client = new Client(
      { name: 'test', version: '1.0.0' },
      {
        versionNegotiation: { mode: 'auto' },
        listChanged: {
          tools: {
            debounceMs: 0,
            onChanged: (_error, tools) => changes.push((tools ?? []).map((t) => t.name)),
          },
        },
      },
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(fake.url)));
    expect(text(await client.callTool({ name: 'add_tool', arguments: { name: 'later' } }))).toBe(
      'added later',
    );
    await expect.poll(() => changes.at(-1)?.includes('later')).toBe(true);
    expect(text(await client.callTool({ name: 'later', arguments: {} }))).toBe('later ran');
  });

  it('drops the connection mid-call on crash and answers again afterwards', async () => {
    fake = await startFakeMcpHttpServer();
    client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(fake.url)));
    await expect(client.callTool({ name: 'crash', arguments: {} })).rejects.toThrow();
    expect(text(await client.callTool({ name: 'echo', arguments: { text: 'back' } }))).toBe('back');
  });

  it('refuses a request without the bearer token it was given', async () => {
    fake = await startFakeMcpHttpServer({ bearerToken: 'sesame-123' });
    client = new Client({ name: 'test', version: '1.0.0' });
    await expect(client.connect(new StreamableHTTPClientTransport(new URL(fake.url)))).rejects.toThrow();
    const authorised = new Client({ name: 'test', version: '1.0.0' });
    await authorised.connect(
      new StreamableHTTPClientTransport(new URL(fake.url), {
        requestInit: { headers: { authorization: 'Bearer sesame-123' } },
      }),
    );
    expect(text(await authorised.callTool({ name: 'echo', arguments: { text: 'ok' } }))).toBe('ok');
    await authorised.close();
  });
});

describe('the fake MCP server over stdio', () => {
  it('serves its tools, returns the size big is asked for and exits mid-call on crash', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [STDIO_PROGRAM, '--tool', 'extra'],
      stderr: 'pipe',
    });
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(transport);
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toContain('extra');
    expect(text(await client.callTool({ name: 'extra', arguments: {} }))).toBe('extra ran');
    expect(text(await client.callTool({ name: 'big', arguments: { bytes: 1_000_000 } }))).toHaveLength(
      1_000_000,
    );
    const closed = new Promise<void>((resolve) => {
      client.onclose = () => resolve();
    });
    await expect(client.callTool({ name: 'crash', arguments: {} })).rejects.toThrow();
    await closed;
  });

  it('exits before serving with --exit-at-start', async () => {
    const client = new Client({ name: 'test', version: '1.0.0' });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [STDIO_PROGRAM, '--exit-at-start', '3'],
      stderr: 'pipe',
    });
    await expect(client.connect(transport)).rejects.toThrow();
  });
});
