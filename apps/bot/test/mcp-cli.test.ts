// `colloquy mcp list` and `colloquy mcp probe` as a user runs them, next to a running app whose agent
// uses the testkit's MCP servers (the model is the local OpenAI-compatible fake).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  FAKE_MCP_STDIO_SERVER,
  type FakeMcpHttpServer,
  startFakeMcpHttpServer,
} from '@colloquy/testkit/mcp-fake';
import { fakeReply, type OpenAIFake, startOpenAIFake } from '@colloquy/testkit/openai-fake';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AppProcess, runCliProcess, startApp } from './support/app-process.js';

let fake: OpenAIFake;
let http: FakeMcpHttpServer;
let app: AppProcess;

const cli = (...args: string[]) => runCliProcess([...args, '--state-dir', 'state'], { cwd: app.dir });

beforeAll(async () => {
  http = await startFakeMcpHttpServer();
  fake = await startOpenAIFake([
    fakeReply.toolCall('local__echo', { text: 'from the model' }),
    fakeReply.text('echoed'),
  ]);
  app = await startApp(
    {
      mcp: {
        servers: {
          local: { command: process.execPath, args: [FAKE_MCP_STDIO_SERVER] },
          web: { url: http.url },
          broken: { command: process.execPath, args: [FAKE_MCP_STDIO_SERVER, '--exit-at-start', '2'] },
        },
      },
      agents: { list: [{ id: 'main', default: true, tools: { allow: ['local__*'] } }] },
    },
    { COLLOQUY_MODEL: 'fake/test-model', OPENAI_BASE_URL: fake.baseURL },
  );
}, 60_000);

afterAll(async () => {
  await app?.cleanup();
  await fake?.close();
  await http?.close();
});

describe('colloquy mcp', { timeout: 90_000 }, () => {
  it('list shows every configured server idle until an agent needs it', async () => {
    const run = await cli('mcp', 'list');
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^SERVER\s+TRANSPORT\s+STATE\s+TOOLS$/);
    expect(lines.slice(1).map((line) => line.split(/\s{2,}/).slice(0, 3))).toEqual([
      ['local', 'stdio', 'idle'],
      ['web', 'http', 'idle'],
      ['broken', 'stdio', 'idle'],
    ]);
  });

  it('list shows a server ready with its tools once a run used it', async () => {
    const send = await cli('sessions', 'send', 'main', 'echo', 'something');
    expect(send.code).toBe(0);
    expect(send.stdout.trim()).toBe('echoed');
    const toolMessage = (
      (fake.requests.at(-1)?.body.messages ?? []) as { role: string; content: unknown }[]
    ).find((m) => m.role === 'tool');
    expect(toolMessage?.content).toBe('from the model');
    await expect
      .poll(
        async () => {
          const json = JSON.parse((await cli('mcp', 'list', '--json')).stdout) as {
            servers: { name: string; state: string; tools: string[] }[];
          };
          return json.servers.find((s) => s.name === 'local');
        },
        { timeout: 15_000, interval: 500 },
      )
      .toMatchObject({ state: 'ready', tools: expect.arrayContaining(['local__echo', 'local__crash']) });
  });

  it('probe starts a server here and lists its tools as the agents see them', async () => {
    const run = await cli('mcp', 'probe', 'web');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('web (http) started and lists 7 tools:');
    expect(run.stdout).toContain('  web__echo');
    expect(run.stdout).toContain('e.g. "web__*"');
  });

  it('probe of a server that cannot start says why, with its stderr, and exits 1', async () => {
    const run = await cli('mcp', 'probe', 'broken');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('stderr: fake-mcp: failing to start, as asked (--exit-at-start)');
    expect(run.stderr).toMatch(/broken: it failed to start \(.+\)/);
  });

  it('probe of a name that is not configured names the ones that are', async () => {
    const run = await cli('mcp', 'probe', 'nope');
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe('No MCP server "nope" is configured (mcp.servers: local, web, broken).');
  });
});

describe('colloquy mcp without a running bot', () => {
  it('list marks the servers not running', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'colloquy-mcp-cli-'));
    try {
      writeFileSync(
        join(dir, 'colloquy.json5'),
        JSON.stringify({ mcp: { servers: { files: { command: 'true' } } } }),
      );
      const run = await runCliProcess(['mcp', 'list', '--state-dir', join(dir, 'state')], { cwd: dir });
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(
        /^files\s+stdio\s+not running\s+unknown until started \(.*mcp probe files\)$/m,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
