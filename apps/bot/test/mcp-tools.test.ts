// The MCP client end to end: the reference app (startBot, SQLite, the scripted model) gives its agent
// the tools of the testkit's MCP server, over stdio and over Streamable HTTP, and every fault mode
// reaches the model as one tool error (or a prompt notice) and the owner as a log line.
import type { ModelMessage, ModelRequest } from '@colloquy/core/model';
import { createRecordingLogger, type ScriptedReply } from '@colloquy/testkit';
import {
  FAKE_MCP_STDIO_SERVER,
  type FakeMcpHttpServer,
  startFakeMcpHttpServer,
} from '@colloquy/testkit/mcp-fake';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BotFixture, startBotFixture } from './support/bot-fixture.js';

/** The text of the tool result the model got for its last call. */
function lastToolResult(request: ModelRequest | undefined): { text: string; isError: boolean } {
  const result = [...(request?.messages ?? [])]
    .reverse()
    .find((m): m is Extract<ModelMessage, { role: 'toolResult' }> => m.role === 'toolResult');
  if (!result) throw new Error('the model got no tool result');
  return { text: String(result.content), isError: result.isError === true };
}

const toolNames = (request: ModelRequest | undefined) =>
  (request?.tools ?? []).map((tool) => tool.name).sort();
const callOnce = (name: string, args: Record<string, unknown> = {}): ScriptedReply => ({
  toolCalls: [{ name, arguments: args }],
});

// Generous limits: every turn may start node processes, slow on a loaded machine.
describe('MCP tools through the reference app', { timeout: 90_000 }, () => {
  let http: FakeMcpHttpServer;
  let fixture: BotFixture;
  const logger = createRecordingLogger();
  const logs = logger.entries;

  beforeAll(async () => {
    http = await startFakeMcpHttpServer({ bearerToken: 'web-mcp-token-1' });
    fixture = await startBotFixture({
      waitMs: 60_000,
      env: { WEB_MCP_TOKEN: 'web-mcp-token-1' },
      logger,
      config: {
        redaction: { secrets: ['hunter2-secret'] },
        mcp: {
          callTimeoutSeconds: 2,
          startTimeoutSeconds: 60,
          maxResultChars: 5000,
          servers: {
            local: {
              command: process.execPath,
              args: [FAKE_MCP_STDIO_SERVER, '--stderr', 'local server up'],
            },
            // A longer timeout of its own: its 10 MiB result takes seconds on a loaded machine.
            web: { url: http.url, bearerTokenEnv: 'WEB_MCP_TOKEN', callTimeoutSeconds: 60 },
            broken: { command: process.execPath, args: [FAKE_MCP_STDIO_SERVER, '--exit-at-start', '2'] },
          },
        },
        agents: {
          list: [
            {
              id: 'main',
              default: true,
              // web__crash, web__fail and web__remove_tool stay hidden from the model.
              tools: {
                allow: [
                  'local__*',
                  'broken__*',
                  'web__echo',
                  'web__hang',
                  'web__big',
                  'web__add_tool',
                  'web__later',
                ],
              },
            },
            { id: 'other' },
          ],
        },
      },
    });
  }, 60_000);

  afterAll(async () => {
    await fixture?.close();
    await http?.close();
  });

  /** One user message: the scripted model makes `call` (if any), then answers with a fixed text. */
  async function turn(call?: ScriptedReply): Promise<ModelRequest | undefined> {
    fixture.model.push(...(call ? [call] : []), 'done');
    const replies = await fixture.say('go');
    expect(replies).toEqual(['done']);
    return fixture.model.lastRequest;
  }

  it('shows the model exactly the allowed tools of both transports, and a server that failed to start as a notice', async () => {
    const request = await turn();
    const names = toolNames(request);
    expect(names.filter((name) => name.includes('__'))).toEqual([
      'local__add_tool',
      'local__big',
      'local__crash',
      'local__echo',
      'local__fail',
      'local__hang',
      'local__remove_tool',
      'web__add_tool',
      'web__big',
      'web__echo',
      'web__hang',
    ]);
    expect(names).toContain('sessions_list');
    expect(request?.system).toContain('Some of your tools are unavailable right now:');
    expect(request?.system).toMatch(/The MCP server "broken" is unavailable: it failed to start \(.+\)\./);
    expect(logs).toContainEqual(
      expect.objectContaining({
        level: 'error',
        msg: 'an MCP server failed to start',
        fields: expect.objectContaining({ mcpServer: 'broken' }),
      }),
    );
    expect(logs).toContainEqual(
      expect.objectContaining({
        msg: 'MCP server stderr',
        fields: expect.objectContaining({ mcpServer: 'local', stderr: 'local server up' }),
      }),
    );
  });

  it('runs a stdio tool and an HTTP tool (with its bearer token), results redacted like history', async () => {
    const local = await turn(callOnce('local__echo', { text: 'the key is hunter2-secret' }));
    expect(lastToolResult(local)).toEqual({ text: 'the key is [REDACTED]', isError: false });
    const web = await turn(callOnce('web__echo', { text: 'over http' }));
    expect(lastToolResult(web)).toEqual({ text: 'over http', isError: false });
    expect(http.calls.at(-1)).toEqual({ tool: 'echo', arguments: { text: 'over http' } });
  });

  it('refuses a tool the allow list leaves out: the model cannot see it, and a call never reaches the server', async () => {
    const request = await turn(callOnce('web__crash'));
    expect(toolNames(request)).not.toContain('web__crash');
    const result = lastToolResult(request);
    expect(result.isError).toBe(true);
    expect(result.text).toContain('Unknown tool \\"web__crash\\"');
    expect(http.calls.map((c) => c.tool)).not.toContain('crash');
  });

  it('answers a crash mid-call with one tool error, logs it, and restarts the server for the next call', async () => {
    const crashed = await turn(callOnce('local__crash'));
    const result = lastToolResult(crashed);
    expect(result.isError).toBe(true);
    expect(result.text).toContain('The MCP server \\"local\\" stopped during the call to crash');
    expect(logs).toContainEqual(
      expect.objectContaining({ level: 'error', msg: 'an MCP server stopped; restarting it' }),
    );
    const next = await turn(callOnce('local__echo', { text: 'back again' }));
    expect(lastToolResult(next)).toEqual({ text: 'back again', isError: false });
  });

  it('answers a hanging call with a timeout error after mcp.callTimeoutSeconds, and the run ends', async () => {
    const started = Date.now();
    const hung = await turn(callOnce('local__hang'));
    expect(Date.now() - started).toBeLessThan(30_000); // not the SDK's 60 s default
    const result = lastToolResult(hung);
    expect(result.isError).toBe(true);
    expect(result.text).toContain('did not answer hang within 2 s, so the call was cancelled');
    expect(logs).toContainEqual(
      expect.objectContaining({ level: 'warn', msg: 'an MCP tool call timed out' }),
    );
  });

  it('cuts a 10 MiB result to mcp.maxResultChars and tells the model', async () => {
    const big = await turn(callOnce('web__big'));
    const result = lastToolResult(big);
    expect(result.isError).toBe(false);
    expect(result.text.length).toBeLessThan(5400);
    expect(result.text).toContain(
      'it had 10,485,760 characters and only the first 5,000 are shown (mcp.maxResultChars)',
    );
    expect(logs).toContainEqual(
      expect.objectContaining({ level: 'warn', msg: 'an MCP tool result was cut' }),
    );
  });

  it('refreshes the tool list after list_changed: a tool the server adds appears in the next turn', async () => {
    const added = await turn(callOnce('web__add_tool', { name: 'later' }));
    expect(lastToolResult(added)).toEqual({ text: 'added later', isError: false });
    await expect
      .poll(async () => toolNames(await turn()), { timeout: 15_000, interval: 200 })
      .toContain('web__later');
    const later = await turn(callOnce('web__later'));
    expect(lastToolResult(later)).toEqual({ text: 'later ran', isError: false });
  });

  it('gives an agent without an allow list no MCP tools and starts nothing for it', async () => {
    fixture.model.push('done');
    const key = 'agent:other:main';
    await fixture.bot.runtime.gateway
      .call('agent', { sessionKey: key, message: 'hi', idempotencyKey: 'other-1' })
      .then(({ runId }) => fixture.bot.runtime.gateway.call('agent.wait', { runId, timeoutMs: 10_000 }));
    expect(toolNames(fixture.model.lastRequest).filter((name) => name.includes('__'))).toEqual([]);
  });
});
