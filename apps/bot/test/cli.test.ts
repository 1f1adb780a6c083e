import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SessionsTreeResult } from '@colloquy/core/gateway';
import { type OpenAIFake, startOpenAIFake } from '@colloquy/testkit/openai-fake';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AppProcess, CLI, runCliProcess, startApp } from './support/app-process.js';

let fake: OpenAIFake;
let app: AppProcess;

/** Runs the CLI in the app's directory (it finds colloquy.json5 there) with the app's state dir. */
const cli = (...args: string[]) => runCliProcess([...args, '--state-dir', 'state'], { cwd: app.dir });

beforeAll(async () => {
  fake = await startOpenAIFake((request) => {
    const messages = request.body.messages as { role: string; content: unknown }[];
    const last = messages.filter((m) => m.role === 'user').at(-1);
    return { text: ['pong: ', String(last?.content ?? '').replace(/^\[[^\]]*\]\s*/, '')] };
  });
  app = await startApp({}, { COLLOQUY_MODEL: 'fake/test-model', OPENAI_BASE_URL: fake.baseURL });
}, 30_000);

afterAll(async () => {
  await app?.cleanup();
  await fake?.close();
});

describe('colloquy CLI against a running app', () => {
  it('status says where the bot runs, its model and channels', async () => {
    const run = await cli('status');
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`Colloquy is running at ${app.gatewayUrl}`);
    expect(run.stdout).toContain(`Web chat: ${app.webchatUrl}`);
    expect(run.stdout).toContain('Model:    fake/test-model');
    expect(run.stdout).toContain('Channels: webchat connected');
    expect(run.stdout).toContain('Agents:   main (default)');
  });

  it('sessions send runs a turn in a session and prints the reply', async () => {
    const run = await cli('sessions', 'send', 'main', 'hello', 'there');
    expect(run.code).toBe(0);
    expect(run.stdout.trim()).toBe('pong: hello there');
    expect(run.stderr).toContain('waiting for agent:main:main');
    const request = fake.requests.at(-1)!;
    expect(request.body.model).toBe('test-model');
  });

  it('sessions list shows the sessions as a table and as JSON', async () => {
    const table = await cli('sessions', 'list');
    expect(table.code).toBe(0);
    const lines = table.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^KEY\s+KIND\s+CHANNEL\s+STATUS\s+UPDATED\s+TOKENS\s+NAME$/);
    expect(lines.some((l) => /^agent:main:main\s+main\s+/.test(l))).toBe(true);
    const json = await cli('sessions', 'list', '--json', '--kind', 'main');
    const parsed = JSON.parse(json.stdout) as { sessions: { key: string }[]; total: number };
    expect(parsed.sessions.map((s) => s.key)).toEqual(['agent:main:main']);
  });

  it('sessions history prints the transcript', async () => {
    const run = await cli('sessions', 'history', 'main', '--limit', '10');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^agent:main:main: 2 messages/);
    expect(run.stdout).toMatch(/user:\n {2}hello there/);
    expect(run.stdout).toMatch(/assistant:\n {2}pong: hello there/);
  });

  it('sessions status prints the stateVersion and, with --changes-since, what changed', async () => {
    const plain = await cli('sessions', 'status', 'main');
    expect(plain.code).toBe(0);
    // One turn: its input and reply (2 messages) and its run's start and end (2 status changes).
    expect(plain.stdout.trim()).toMatch(/^agent:main:main: \w+, stateVersion 4, 0 queued$/);
    const since = await cli('sessions', 'status', 'main', '--changes-since', '1');
    expect(since.stdout).toContain('Changes since 1: 1 message, 2 run status changes, 0 patches');
    const json = await cli('sessions', 'status', 'main', '--changes-since', '0', '--json');
    expect(JSON.parse(json.stdout)).toMatchObject({
      sessionKey: 'agent:main:main',
      stateVersion: 4,
      changes: {
        fromVersion: 0,
        toVersion: 4,
        changes: { message: 2, status: 2, patch: 0 },
        truncated: false,
      },
    });
    const bad = await cli('sessions', 'status', 'main', '--changes-since', 'soon');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('--changes-since must be a whole number of at least 0, got "soon".');
    const ahead = await cli('sessions', 'status', 'main', '--changes-since', '99');
    expect(ahead.code).toBe(1);
    expect(ahead.stderr).toContain("changesSince 99 is ahead of the session's stateVersion 4");
  });

  // Six CLI processes: on a loaded machine that is more than the default 20 s.
  it("tree and runs print a session's runs with durations, as text and as JSON", {
    timeout: 60_000,
  }, async () => {
    const tree = await cli('tree', 'main');
    expect(tree.stderr).toBe('');
    expect(tree.code).toBe(0);
    expect(tree.stdout.trim()).toMatch(/^agent:main:main {2}\w+ {2}\d+ runs? {2}[\d.]+m?s\b/);
    const json = JSON.parse((await cli('tree', 'main', '--json')).stdout) as SessionsTreeResult;
    expect(json.rootKey).toBe('agent:main:main');
    expect(json.nodes[0]!.runs[0]).toMatchObject({ status: 'done', durationMs: expect.any(Number) });

    const runs = await cli('runs', 'main');
    expect(runs.code).toBe(0);
    const lines = runs.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^RUN\s+STATUS\s+STARTED\s+DURATION\s+IN\s+OUT\s+TOOLS\s+ANNOUNCE\s+ERROR$/);
    expect(lines[1]).toMatch(/^[0-9a-f-]{8}\s+done\s+(just now|\d+s ago)\s+[\d.]+m?s\s+/);
    const runsJson = JSON.parse((await cli('runs', 'main', '--json', '--limit', '1')).stdout) as {
      sessionKey: string;
      runs: unknown[];
    };
    expect(runsJson.sessionKey).toBe('agent:main:main');
    expect(runsJson.runs).toHaveLength(1);

    const missing = await cli('tree', 'agent:main:nobody');
    expect(missing.code).toBe(1);
    expect(missing.stderr.trim()).toBe(
      `No session "agent:main:nobody". See the session keys with: node ${CLI} sessions list`,
    );
    const bad = await cli('runs', 'main', '--limit', '500');
    expect(bad.stderr.trim()).toBe('--limit must be a whole number from 1 to 100, got "500".');
    const help = await runCliProcess(['tree', '--help'], { cwd: app.dir });
    expect(help.stdout).toContain('tree <session> [--runs n]');
  });

  it('sessions list, history and search page with --offset, and search finds words', async () => {
    const list = await cli('sessions', 'list', '--json', '--offset', '1');
    expect(list.code).toBe(0);
    expect((JSON.parse(list.stdout) as { sessions: unknown[] }).sessions).toEqual([]);
    const older = await cli('sessions', 'history', 'main', '--limit', '1', '--offset', '1', '--json');
    const page = JSON.parse(older.stdout) as { messages: { content: unknown }[]; hasMore: boolean };
    expect(page.messages.map((m) => m.content)).toEqual(['hello there']);
    expect(page.hasMore).toBe(false);
    const newest = await cli('sessions', 'history', 'main', '--limit', '1');
    expect(newest.stdout).toContain('(older messages: --offset 1)');
    const found = await cli('sessions', 'search', 'PONG', 'hello');
    expect(found.code).toBe(0);
    expect(found.stdout).toMatch(/^agent:main:main #1 assistant \[/);
    expect(found.stdout).toContain('  pong: hello there');
    expect(found.stdout).toContain('(1-1 of 1)');
    const none = await cli('sessions', 'search', 'nothing-like-this');
    expect(none.stdout.trim()).toBe('No messages match "nothing-like-this".');
    const bad = await cli('sessions', 'search', '--offset=-2', 'pong');
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('--offset must be a whole number of at least 0, got "-2".');
  }, 60_000); // eight CLI processes: each took 2.3 s to start on 2 busy cores (0.3 s of CPU)

  it('explains a missing session, a wrong token and a bot that is not running', async () => {
    const missing = await cli('sessions', 'history', 'agent:main:nowhere:dm:x');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/session/i);
    const wrong = await cli('status', '--token', 'not-the-token');
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('refused the token');
    const down = await runCliProcess(['status', '--url', 'ws://127.0.0.1:9', '--token', 'x'], {
      cwd: app.dir,
    });
    expect(down.code).toBe(1);
    expect(down.stderr).toContain(`Is the bot running? Start it with \`node ${CLI} start\`.`);
    expect(missing.stderr).toContain(
      `No session "agent:main:nowhere:dm:x". See the session keys with: node ${CLI} sessions list`,
    );
    expect(missing.stderr).not.toContain('sessions.list');
  });

  it('names the commands as the user calls them: pnpm colloquy in the repository', async () => {
    const run = await runCliProcess(['sessions', 'list', '--bogus'], {
      cwd: app.dir,
      env: { npm_package_name: 'colloquy-monorepo' },
    });
    expect(run.stderr).toContain('See `pnpm colloquy sessions list --help`.');
  });

  it('prints the usage of a command given without its sub-command, and clear flag errors', async () => {
    const bare = await runCliProcess(['sessions'], { cwd: app.dir });
    expect(bare.code).toBe(1);
    expect(bare.stderr).toContain('sessions list [--kind k]');
    expect(bare.stderr).not.toContain('Unknown');
    const negative = await cli('sessions', 'list', '--limit', '-5');
    expect(negative.code).toBe(1);
    expect(negative.stderr.trim()).toBe('--limit must be a whole number of at least 1, got "-5".');
    const missing = await cli('sessions', 'list', '--limit');
    expect(missing.stderr).toContain('--limit needs a value.');
  });

  it('rejects unknown flags with a pointer to the help', async () => {
    const run = await cli('sessions', 'list', '--bogus');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`See \`node ${CLI} sessions list --help\`.`);
  });
});

describe('colloquy config check and init', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'colloquy-cli-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("accepts the running app's config and says what it turns on", async () => {
    const run = await runCliProcess(['config', 'check', '--config', app.configFile], {
      cwd: dir,
      env: { COLLOQUY_MODEL: 'fake/m', OPENAI_BASE_URL: 'http://127.0.0.1:1/v1' },
    });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`Config OK: ${app.configFile}`);
    expect(run.stdout).toContain('Model:    fake/m');
    expect(run.stdout).toContain('From the environment: agents.defaults.model from COLLOQUY_MODEL');
  });

  it('refuses a model that cannot work, naming the environment variable it came from', async () => {
    const env = { COLLOQUY_MODEL: 'openai/gpt-4o-mini' };
    const check = await runCliProcess(['config', 'check'], { cwd: dir, env });
    expect(check.code).toBe(1);
    expect(check.stderr).toContain('COLLOQUY_MODEL=openai/gpt-4o-mini names the provider "openai"');
    expect(check.stderr).toContain('set OPENAI_API_KEY (OpenAI) or OPENAI_BASE_URL');
    expect(check.stderr).not.toContain('your config file');
    const quiet = join(dir, 'quiet-ports.json5');
    writeFileSync(quiet, JSON.stringify({ gateway: { port: 0 }, channels: { webchat: { port: 0 } } }));
    const start = await runCliProcess(
      ['start', '--config', quiet, '--state-dir', join(dir, 'refused-state')],
      { cwd: dir, env },
    );
    expect(start.code).toBe(1);
    expect(start.stderr).toContain('Colloquy cannot start: COLLOQUY_MODEL=openai/gpt-4o-mini');
    expect(start.stdout).not.toContain('Colloquy is running.');
  });

  it('refuses a model whose provider is not configured, and a provider key variable that is not set', async () => {
    const nosuch = join(dir, 'nosuch.json5');
    writeFileSync(nosuch, JSON.stringify({ agents: { defaults: { model: 'nosuch/x' } } }));
    const check = await runCliProcess(['config', 'check', '--config', nosuch], { cwd: dir });
    expect(check.code).toBe(1);
    expect(check.stderr).toContain(
      `agents.defaults.model "nosuch/x" names the provider "nosuch", which is not set up`,
    );
    expect(check.stderr).toContain(`add models.providers.nosuch in ${nosuch}`);
    const json = await runCliProcess(['config', 'check', '--config', nosuch, '--json'], { cwd: dir });
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, models: [{ path: 'agents.defaults.model' }] });
    const keyed = join(dir, 'keyed.json5');
    writeFileSync(
      keyed,
      JSON.stringify({
        agents: { defaults: { model: 'openai/gpt-4o-mini' } },
        models: {
          providers: { openai: { kind: 'openai-compatible', baseURL: 'https://api.openai.com/v1' } },
        },
      }),
    );
    const noKey = await runCliProcess(['config', 'check', '--config', keyed], { cwd: dir });
    expect(noKey.code).toBe(1);
    expect(noKey.stderr).toContain('it needs an API key; set models.providers.openai.apiKeyEnv');
  });

  it('warns when the web chat or the gateway listens on every interface', async () => {
    const open = join(dir, 'open.json5');
    writeFileSync(
      open,
      JSON.stringify({ gateway: { host: '0.0.0.0' }, channels: { webchat: { host: '0.0.0.0' } } }),
    );
    const run = await runCliProcess(['config', 'check', '--config', open], { cwd: dir });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Warning: channels.webchat.host is "0.0.0.0"');
    expect(run.stdout).toContain('channels.webchat.allowedHosts');
    expect(run.stdout).toContain('Warning: gateway.host is "0.0.0.0"');
    const quiet = await runCliProcess(['config', 'check', '--config', app.configFile], { cwd: dir });
    expect(quiet.stdout).not.toContain('Warning:');
  });

  it('lists every bad setting with what was expected and what was found, and exits 1', async () => {
    const bad = join(dir, 'bad.json5');
    writeFileSync(
      bad,
      `{
        tools: { sessions: { visibility: "everyone" } },
        gateway: { port: "7421" },
        channels: { webchat: { assistantName: "" }, whatsapp: { dmPolicy: "nobody" } },
        app: { owner: [] },
      }`,
    );
    const run = await runCliProcess(['config', 'check', '--config', bad], { cwd: dir });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('Invalid Colloquy config (5 problems)');
    expect(run.stderr).toContain(
      'tools.sessions.visibility: expected one of "self" | "tree" | "agent" | "all", got "everyone"',
    );
    expect(run.stderr).toContain('gateway.port: expected integer 0..65535, got "7421"');
    expect(run.stderr).toContain(
      'channels.webchat.assistantName: expected a name of 1 to 40 characters, got ""',
    );
    expect(run.stderr).toContain(
      'channels.whatsapp.dmPolicy: expected one of "open" | "allowlist" | "pairing", got "nobody"',
    );
    expect(run.stderr).toContain('app.owner: unknown setting; allowed: stateDir, owners, logLevel');
    const json = await runCliProcess(['config', 'check', '--config', bad, '--json'], { cwd: dir });
    expect(json.code).toBe(1);
    expect((JSON.parse(json.stdout) as { issues: unknown[] }).issues).toHaveLength(5);
  });

  it('init writes a commented config that passes the check, and never overwrites by accident', async () => {
    const first = await runCliProcess(['init'], { cwd: dir });
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(`Wrote ${join(dir, 'colloquy.json5')}`);
    const again = await runCliProcess(['init'], { cwd: dir });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('already exists');
    const check = await runCliProcess(['config', 'check'], { cwd: dir });
    expect(check.code).toBe(0);
    expect(check.stdout).toContain(`Config OK: ${join(dir, 'colloquy.json5')}`);
  });

  it('pairing list works on an empty state dir', async () => {
    const run = await runCliProcess(['pairing', 'list', '--state-dir', join(dir, 'state')], { cwd: dir });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(
      'telegram:\n  pending: none\n  approved: none\nwhatsapp:\n  pending: none\n  approved: none\n',
    );
    const wrong = await runCliProcess(
      ['pairing', 'approve', 'telegram', 'NOPE1234', '--state-dir', join(dir, 'state')],
      {
        cwd: dir,
      },
    );
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('No pending telegram pairing code "NOPE1234"');
  });
});

describe('a second colloquy start on the same ports', () => {
  it('says Colloquy is probably running (with its pid) and how to pick other ports, without a stack trace', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'colloquy-busy-'));
    const first = join(dir, 'colloquy.json5');
    writeFileSync(first, JSON.stringify({ gateway: { port: 0 }, channels: { webchat: { port: 0 } } }));
    mkdirSync(join(dir, '.colloquy'));
    const running = await startApp({}, {}, { stateDir: join(dir, '.colloquy'), configFile: first });
    try {
      const second = join(dir, 'second.json5');
      const port = (url: string) => Number(new URL(url).port);
      writeFileSync(
        second,
        JSON.stringify({
          gateway: { port: port(running.gatewayUrl) },
          channels: { webchat: { port: port(running.webchatUrl) } },
        }),
      );
      const run = await runCliProcess(
        ['start', '--config', second, '--state-dir', join(dir, 'other-state'), '--log-format', 'pretty'],
        { cwd: dir },
      );
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(
        `Colloquy could not start: 127.0.0.1:${port(running.webchatUrl)} (the web chat) is already in use: Colloquy is probably already running (pid ${running.child.pid}`,
      );
      expect(run.stderr).toContain(`COLLOQUY_WEBCHAT_PORT=8420 COLLOQUY_GATEWAY_PORT=8421`);
      expect(run.stderr).toContain(`set channels.webchat.port and gateway.port in ${second}`);
      expect(`${run.stdout}${run.stderr}`).not.toMatch(/stack|\n\s+at /);
    } finally {
      await running.cleanup();
    }
  });
});

describe('colloquy sessions send without a model', () => {
  let bare: AppProcess | undefined;
  afterAll(async () => {
    await bare?.cleanup();
  });

  it('runs slash commands in the bot instead of sending them to the missing model', async () => {
    bare = await startApp({}, {});
    const run = await runCliProcess(['sessions', 'send', 'main', '/help', '--state-dir', 'state'], {
      cwd: bare.dir,
    });
    expect(run.stderr).not.toContain('No model is configured');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Commands:');
    expect(run.stdout).toContain('/status');
    const history = await runCliProcess(['sessions', 'history', 'main', '--state-dir', 'state'], {
      cwd: bare.dir,
    });
    expect(history.stdout).toMatch(/assistant:\n {2}Commands:/);
  });

  it('says up front that a chat message needs a model, and stores nothing', async () => {
    bare ??= await startApp({}, {});
    const run = await runCliProcess(['sessions', 'send', 'main', 'hi', '--state-dir', 'state'], {
      cwd: bare.dir,
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('The bot has no model, so nothing can answer yet.');
    expect(run.stderr).toContain('COLLOQUY_MODEL=openai/gpt-4o-mini');
    expect(run.stderr).not.toContain('The run ended with status error');
    const history = await runCliProcess(['sessions', 'history', 'main', '--state-dir', 'state', '--json'], {
      cwd: bare.dir,
    });
    expect(history.stdout).not.toContain('"hi"');
  });
});
