import { createRequire } from 'node:module';
import type { AgentTool, ToolResult } from '@colloquy/core';
import { createRecordingLogger } from '@colloquy/testkit';
import { type FakeMcpHttpServer, startFakeMcpHttpServer } from '@colloquy/testkit/mcp-fake';
import { afterEach, describe, expect, it } from 'vitest';
import { historyTokenBudget } from '../../agent/prompt-budget.js';
import { estimateTokens } from '../../agent/token-estimate.js';
import { runToolCall } from '../../agent/tool-runner.js';
import type { McpServerConfig, McpToolSourceOptions } from './mcp-client-options.js';
import { createMcpToolSource, type McpToolSource } from './mcp-tool-source.js';

const FAKE_STDIO = createRequire(import.meta.url)
  .resolve('@colloquy/testkit/mcp-fake')
  .replace(/index\.js$/, 'stdio-host.js');

const stdio = (...args: string[]): McpServerConfig => ({
  command: process.execPath,
  args: [FAKE_STDIO, ...args],
});

const textOf = (result: ToolResult) => result.content?.[0]?.text ?? '';
const errorOf = (result: ToolResult) =>
  (JSON.parse(textOf(result)) as { status: string; error: string }).error;
const named = (tools: readonly AgentTool[], name: string) => {
  const tool = tools.find((t) => t.name === name);
  if (!tool) throw new Error(`no tool ${name} among ${tools.map((t) => t.name).join(', ')}`);
  return tool;
};
const call = (tool: AgentTool, args: Record<string, unknown> = {}) => tool.execute('call-1', args as never);

describe('createMcpToolSource', () => {
  let source: McpToolSource | undefined;
  let http: FakeMcpHttpServer | undefined;
  const logger = createRecordingLogger();
  const logs = logger.entries;
  const open = (servers: Record<string, McpServerConfig>, options: Partial<McpToolSourceOptions> = {}) => {
    source = createMcpToolSource({
      servers,
      logger,
      restartBackoffMs: { initial: 50, max: 200 },
      ...options,
    });
    return source;
  };
  afterEach(async () => {
    await source?.close();
    await http?.close();
    source = undefined;
    http = undefined;
    logs.length = 0;
  });

  it('offers the allowed tools as <server>__<tool> and starts no server the list cannot reach', async () => {
    http = await startFakeMcpHttpServer();
    const mcp = open({ web: { url: http.url }, local: stdio() });
    const { tools, notices } = await mcp.toolsFor([['web__echo', 'web__big']]);
    expect(tools.map((t) => t.name).sort()).toEqual(['web__big', 'web__echo']);
    expect(notices).toEqual([]);
    expect(mcp.servers().map((s) => [s.name, s.state])).toEqual([
      ['web', 'ready'],
      ['local', 'idle'],
    ]);
    expect(await mcp.toolsFor([])).toEqual({ tools: [], notices: [] });
    expect(await mcp.toolsFor([['web__*'], ['web__echo']])).toMatchObject({ tools: [{ name: 'web__echo' }] });
  });

  it('returns results redacted like history, over stdio and over HTTP with a bearer token', async () => {
    http = await startFakeMcpHttpServer({ bearerToken: 'bearer-token-123' });
    const mcp = open(
      {
        web: { url: http.url, bearerToken: 'bearer-token-123', headers: { 'x-team': 'blue' } },
        local: stdio(),
      },
      { secrets: ['hunter2-secret'] },
    );
    const { tools } = await mcp.toolsFor([['*__echo']]);
    const fromStdio = await call(named(tools, 'local__echo'), { text: 'key hunter2-secret' });
    expect(textOf(fromStdio)).toBe('key [REDACTED]');
    expect(fromStdio.isError).toBeUndefined();
    expect(textOf(await call(named(tools, 'web__echo'), { text: 'hello' }))).toBe('hello');
    expect(http.requestHeaders.at(-1)).toMatchObject({
      authorization: 'Bearer bearer-token-123',
      'x-team': 'blue',
    });
  });

  // Over HTTP: the SDK's stdio reader takes seconds per MiB at this size (it copies its buffer per chunk).
  it('cuts a 10 MiB result to maxResultChars with a notice, and logs it', async () => {
    http = await startFakeMcpHttpServer();
    const mcp = open({ web: { url: http.url } }, { maxResultChars: 2000 });
    const { tools } = await mcp.toolsFor([['web__big']]);
    const result = await call(named(tools, 'web__big'));
    expect(result.isError).toBeUndefined();
    expect(textOf(result)).toContain(
      'it had 10,485,760 characters and only the first 2,000 are shown (mcp.maxResultChars)',
    );
    expect(textOf(result).length).toBeLessThan(2300);
    expect(logs).toContainEqual(
      expect.objectContaining({ level: 'warn', msg: 'an MCP tool result was cut' }),
    );
  });

  it('answers a hanging call with a timeout error naming the setting, and the server keeps serving', async () => {
    http = await startFakeMcpHttpServer();
    const mcp = open({ web: { url: http.url, callTimeoutMs: 300 } });
    const { tools } = await mcp.toolsFor([['web__*']]);
    const started = Date.now();
    const result = await call(named(tools, 'web__hang'));
    expect(Date.now() - started).toBeLessThan(5000);
    expect(result.isError).toBe(true);
    expect(errorOf(result)).toBe(
      'The MCP server "web" did not answer hang within 1 s, so the call was cancelled (mcp.servers.web.callTimeoutSeconds).',
    );
    expect(logs).toContainEqual(
      expect.objectContaining({ level: 'warn', msg: 'an MCP tool call timed out' }),
    );
    expect(textOf(await call(named(tools, 'web__echo'), { text: 'still here' }))).toBe('still here');
  });

  it('reports a crash mid-call, logs its stderr, restarts the server with backoff and serves again', async () => {
    const mcp = open({ local: stdio('--stderr', 'fake server says hello') });
    const { tools } = await mcp.toolsFor([['local__*']]);
    const result = await call(named(tools, 'local__crash'));
    expect(result.isError).toBe(true);
    expect(errorOf(result)).toContain('The MCP server "local" stopped during the call to crash');
    expect(logs).toContainEqual(
      expect.objectContaining({ level: 'error', msg: 'an MCP server stopped; restarting it' }),
    );
    expect(logs).toContainEqual(
      expect.objectContaining({
        msg: 'MCP server stderr',
        fields: { mcpServer: 'local', stderr: 'fake server says hello' },
      }),
    );
    await expect.poll(() => mcp.servers()[0]?.state, { timeout: 10_000 }).toBe('ready');
    expect(textOf(await call(named(tools, 'local__echo'), { text: 'back' }))).toBe('back');
  });

  it('tells the model once that a server failed to start, logs why, and retries only after the backoff', async () => {
    const mcp = open(
      { broken: stdio('--exit-at-start', '3') },
      { restartBackoffMs: { initial: 60_000, max: 60_000 } },
    );
    const first = await mcp.toolsFor([['broken__*']]);
    expect(first.tools).toEqual([]);
    expect(first.notices).toHaveLength(1);
    expect(first.notices[0]).toMatch(
      /^The MCP server "broken" is unavailable: it failed to start \(.+\)\. It is tried again in 60 s\.$/,
    );
    const failure = logs.find((entry) => entry.msg === 'an MCP server failed to start');
    expect(failure?.level).toBe('error');
    expect(failure?.fields.stderr).toEqual(['fake-mcp: failing to start, as asked (--exit-at-start)']);
    const started = Date.now();
    const second = await mcp.toolsFor([['broken__*']]);
    expect(Date.now() - started).toBeLessThan(200);
    expect(second.notices[0]).toMatch(/It is tried again in (59|60) s\.$/);
    expect(logs.filter((entry) => entry.msg === 'an MCP server failed to start')).toHaveLength(1);
    expect(mcp.servers()[0]).toMatchObject({ name: 'broken', state: 'failed', tools: [] });
  });

  it('refreshes the tool list on list_changed, and says so when a removed tool is called', async () => {
    http = await startFakeMcpHttpServer();
    const mcp = open({ web: { url: http.url } });
    const before = (await mcp.toolsFor([['web__*']])).tools;
    expect(textOf(await call(named(before, 'web__add_tool'), { name: 'later' }))).toBe('added later');
    await expect
      .poll(async () => (await mcp.toolsFor([['web__*']])).tools.map((t) => t.name), { timeout: 10_000 })
      .toContain('web__later');
    http.removeTool('echo');
    await expect
      .poll(async () => (await mcp.toolsFor([['web__*']])).tools.map((t) => t.name), { timeout: 10_000 })
      .not.toContain('web__echo');
    const stale = await call(named(before, 'web__echo'), { text: 'x' });
    expect(stale.isError).toBe(true);
    expect(errorOf(stale)).toMatch(
      /^web__echo is no longer offered: the MCP server "web" changed its tool list\. Its tools now: .*web__later/,
    );
  });

  it('runs through the agent tool runner, which checks only that the arguments are an object', async () => {
    const mcp = open({ local: stdio() });
    const { tools } = await mcp.toolsFor([['local__echo']]);
    expect(await runToolCall(tools, { id: 'c1', name: 'local__echo', arguments: { text: 'hi' } })).toEqual({
      text: 'hi',
      isError: false,
    });
    const refused = await runToolCall(tools, { id: 'c2', name: 'local__echo', arguments: [1] });
    expect(refused.isError).toBe(true);
    // The server validates against its own schema and answers with a tool error the model can read.
    const invalid = await runToolCall(tools, { id: 'c3', name: 'local__echo', arguments: {} });
    expect(invalid.isError).toBe(true);
    expect(invalid.text).toContain('text');
  });

  it('counts the input schemas of MCP tools in the prompt budget', async () => {
    const mcp = open({ local: stdio() });
    const { tools } = await mcp.toolsFor([['local__*']]);
    const schemaTokens = tools.reduce(
      (sum, tool) => sum + estimateTokens(JSON.stringify(tool.parameters)),
      0,
    );
    expect(schemaTokens).toBeGreaterThan(0);
    const without = historyTokenBudget(128_000, 'Be brief.', []);
    const withMcp = historyTokenBudget(128_000, 'Be brief.', tools);
    expect(without - withMcp).toBeGreaterThanOrEqual(schemaTokens);
    expect(JSON.stringify(tools.find((t) => t.name === 'local__echo')?.parameters)).toBe(
      '{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}',
    );
  });

  it('probes one server by name and refuses a name that is not configured', async () => {
    const mcp = open({ local: stdio('--tool', 'extra') });
    const status = await mcp.probe('local');
    expect(status).toMatchObject({ name: 'local', transport: 'stdio', state: 'ready' });
    expect(status.tools).toContain('local__extra');
    await expect(mcp.probe('nope')).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });

  it('refuses a server name the model could not tell apart from its tools', () => {
    expect(() => createMcpToolSource({ servers: { a__b: stdio() } })).toThrow(/mcp\.servers/);
  });
});
