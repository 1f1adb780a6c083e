import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatIssues } from '@colloquy/core';
import JSON5 from 'json5';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CONFIG_TEMPLATE } from './config-template.js';
import { loadBotConfig } from './load-config.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'colloquy-config-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function write(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

describe('loadBotConfig', () => {
  it('takes the ports from the environment and reports a port that is not a number', async () => {
    const loaded = await loadBotConfig({
      env: { COLLOQUY_GATEWAY_PORT: '9101', COLLOQUY_WEBCHAT_PORT: '9100' },
      baseDir: dir,
    });
    expect(loaded.ok).toBe(true);
    if (!loaded.ok) return;
    expect(loaded.config.core.gateway.port).toBe(9101);
    expect(loaded.config.webchat.port).toBe(9100);
    expect(loaded.config.fromEnvironment).toContain('gateway.port from COLLOQUY_GATEWAY_PORT');

    const bad = await loadBotConfig({ env: { COLLOQUY_WEBCHAT_PORT: 'eighty' }, baseDir: dir });
    expect(bad.ok).toBe(false);
    if (bad.ok) return;
    expect(bad.issues.map((issue) => issue.path)).toContain('channels.webchat.port');
    expect(bad.fromEnvironment).toEqual(['channels.webchat.port from COLLOQUY_WEBCHAT_PORT']);
  });

  it('adds a token written in the config file to the redaction list, not only tokens from the environment', async () => {
    const file = write(
      'c.json5',
      '{ channels: { telegram: { accounts: [{ token: "123456:TOKEN-in-the-file" }] } } }',
    );
    const loaded = await loadBotConfig({ configFile: file, env: {}, baseDir: dir });
    expect(loaded.ok).toBe(true);
    if (!loaded.ok) return;
    expect(loaded.config.core.redaction.secrets).toContain('123456:TOKEN-in-the-file');
  });

  it('selects PostgreSQL with storage.url and masks its password in every output', async () => {
    const url = 'postgres://bot:s3cret-pw@127.0.0.1:5432/colloquy';
    const loaded = await loadBotConfig({ env: { COLLOQUY_DATABASE_URL: url }, baseDir: dir });
    expect(loaded.ok).toBe(true);
    if (!loaded.ok) return;
    const defaults = {
      preparedStatements: true,
      unreachableAfterSeconds: 30,
      diskReserveBytes: 16 * 1024 * 1024,
      diskMinFreeBytes: 4 * 1024 * 1024,
    };
    expect(loaded.config.storage).toEqual({ url, ...defaults });
    expect(loaded.config.core.redaction.secrets).toContain('s3cret-pw');
    const sqlite = await loadBotConfig({ env: {}, baseDir: dir });
    expect(sqlite.ok && sqlite.config.storage).toEqual(defaults);
  });

  it('turns PostgreSQL prepared statements off with storage.preparedStatements, and wants a boolean', async () => {
    const off = write('off.json5', '{ storage: { url: "postgres://db/x", preparedStatements: false } }');
    const loaded = await loadBotConfig({ configFile: off, env: {}, baseDir: dir });
    expect(loaded.ok && loaded.config.storage.preparedStatements).toBe(false);
    const wrong = write('wrong.json5', '{ storage: { preparedStatements: "no" } }');
    const refused = await loadBotConfig({ configFile: wrong, env: {}, baseDir: dir });
    expect(refused.ok).toBe(false);
    if (refused.ok) return;
    expect(refused.issues.map((i) => i.path)).toEqual(['storage.preparedStatements']);
  });

  it('turns sub-agent progress off per channel with channels.<id>.progress, and wants a boolean', async () => {
    const off = write(
      'off.json5',
      '{ channels: { webchat: { progress: false }, telegram: { progress: true, accounts: [{ token: "1:a" }] } } }',
    );
    const loaded = await loadBotConfig({ configFile: off, env: {}, baseDir: dir });
    expect(loaded.ok, loaded.ok ? '' : formatIssues(loaded.issues)).toBe(true);
    if (!loaded.ok) return;
    expect(loaded.config.core.channels).toMatchObject({
      webchat: { progress: false },
      telegram: { progress: true },
    });
    expect(loaded.config.platforms.telegram?.accounts).toHaveLength(1);
    const wrong = write('wrong.json5', '{ channels: { webchat: { progress: "no" } } }');
    const refused = await loadBotConfig({ configFile: wrong, env: {}, baseDir: dir });
    expect(refused.ok).toBe(false);
    if (refused.ok) return;
    expect(refused.issues.map((i) => i.path)).toEqual(['channels.webchat.progress']);
  });

  it('refuses a storage.url that is not a PostgreSQL URL, and unknown storage keys', async () => {
    const file = write('c.json5', '{ storage: { url: "mysql://x/y", path: "db" } }');
    const loaded = await loadBotConfig({ configFile: file, env: {}, baseDir: dir });
    expect(loaded.ok).toBe(false);
    if (loaded.ok) return;
    expect(loaded.issues.map((i) => i.path).sort()).toEqual(['storage.path', 'storage.url']);
  });

  it('uses the embedded default when there is no file: web chat only, state in ./.colloquy', async () => {
    const loaded = await loadBotConfig({ env: {}, baseDir: dir });
    expect(loaded.ok).toBe(true);
    if (!loaded.ok) return;
    expect(loaded.config.file).toBeUndefined();
    expect(loaded.config.webchat).toMatchObject({ enabled: true, host: '127.0.0.1', port: 7420 });
    expect(loaded.config.platforms).toEqual({});
    expect(loaded.config.stateDir).toBe(join(dir, '.colloquy'));
    expect(loaded.config.core.gateway).toMatchObject({ host: '127.0.0.1', port: 7421 });
    expect(loaded.config.core.agents.defaults.model).toBeUndefined();
  });

  it('picks up ./colloquy.json5 from the invocation directory', async () => {
    write('colloquy.json5', '{ // comment\n channels: { webchat: { port: 8123, }, }, }');
    const loaded = await loadBotConfig({ env: {}, baseDir: dir });
    expect(loaded.ok && loaded.config.webchat.port).toBe(8123);
    expect(loaded.ok && loaded.config.file).toBe(join(dir, 'colloquy.json5'));
  });

  it('reports every bad setting across core, app, web chat and platform sections at once', async () => {
    const file = write(
      'bad.json5',
      JSON.stringify({
        tools: { sessions: { visibility: 'everyone' } },
        session: { agentToAgent: { maxPingPongTurns: 9 } },
        app: { owners: { telegram: 'alice' }, color: 'blue' },
        channels: {
          webchat: { port: 70000 },
          telegram: { accounts: [{ token: 'not-a-token' }] },
          matrix: {},
        },
      }),
    );
    const loaded = await loadBotConfig({ configFile: file, env: {}, baseDir: dir });
    expect(loaded.ok).toBe(false);
    if (loaded.ok) return;
    const paths = loaded.issues.map((i) => i.path).sort();
    expect(paths).toEqual(
      [
        'app.color',
        'app.owners.telegram',
        'channels.matrix',
        'channels.telegram.accounts[0].token',
        'channels.webchat.port',
        'session.agentToAgent.maxPingPongTurns',
        'tools.sessions.visibility',
      ].sort(),
    );
    const port = loaded.issues.find((i) => i.path === 'channels.webchat.port');
    expect(port).toEqual({ path: 'channels.webchat.port', expected: 'integer 0..65535', got: '70000' });
    const token = loaded.issues.find((i) => i.path === 'channels.telegram.accounts[0].token');
    expect(token?.got).not.toContain('not-a-token');
  });

  it('explains a JSON5 syntax error and a missing file', async () => {
    const broken = await loadBotConfig({ configFile: write('broken.json5', '{ a: '), env: {}, baseDir: dir });
    expect(broken.ok).toBe(false);
    if (!broken.ok) expect(broken.issues[0]).toMatchObject({ path: '(file)', expected: 'valid JSON5' });
    const missing = await loadBotConfig({ configFile: join(dir, 'nope.json5'), env: {}, baseDir: dir });
    expect(missing.ok).toBe(false);
    if (!missing.ok) expect(missing.issues[0]).toMatchObject({ path: '(file)', got: 'no such file' });
  });

  it('lets the environment fill gaps and adds secret values to the redaction list', async () => {
    const loaded = await loadBotConfig({
      env: {
        COLLOQUY_MODEL: 'local/m',
        OPENAI_BASE_URL: 'http://127.0.0.1:1/v1',
        OPENAI_API_KEY: 'sk-secret-1',
      },
      baseDir: dir,
    });
    expect(loaded.ok).toBe(true);
    if (!loaded.ok) return;
    expect(loaded.config.core.agents.defaults.model).toBe('local/m');
    expect(loaded.config.core.models.providers.local).toEqual({
      kind: 'openai-compatible',
      baseURL: 'http://127.0.0.1:1/v1',
      apiKeyEnv: 'OPENAI_API_KEY',
    });
    expect(loaded.config.core.redaction.secrets).toContain('sk-secret-1');
    expect(loaded.config.fromEnvironment).toHaveLength(2);
  });

  it('refuses a Discord account whose token variable is unset', async () => {
    const file = write('d.json5', '{ channels: { discord: { accounts: [{ tokenEnv: "MY_DISCORD" }] } } }');
    const loaded = await loadBotConfig({ configFile: file, env: {}, baseDir: dir });
    expect(loaded.ok).toBe(false);
    if (!loaded.ok) expect(loaded.issues[0]?.path).toBe('channels.discord.accounts[0].tokenEnv');
  });

  it('loads a Slack section and refuses one whose app token variable is unset', async () => {
    const section =
      '{ channels: { slack: { accounts: [{ botTokenEnv: "MY_BOT", appTokenEnv: "MY_APP" }] } } }';
    const file = write('s.json5', section);
    const loaded = await loadBotConfig({
      configFile: file,
      env: { MY_BOT: 'xoxb-1', MY_APP: 'xapp-1' },
      baseDir: dir,
    });
    expect(loaded.ok && loaded.config.platforms.slack?.mode).toBe('socket');
    const unset = await loadBotConfig({ configFile: file, env: { MY_BOT: 'xoxb-1' }, baseDir: dir });
    expect(unset.ok).toBe(false);
    if (!unset.ok)
      expect(unset.issues.map((issue) => issue.path)).toEqual(['channels.slack.accounts[0].appTokenEnv']);
  });

  it('names the settings allowed where an unknown one is written, in every section', async () => {
    const file = write(
      'typos.json5',
      JSON.stringify({
        sesion: {},
        app: { logLevle: 'debug' },
        channels: {
          discord: { accounts: [{ accountId: 'main', token: 't', gatewayURL: 'ws://127.0.0.1:1' }] },
          telegram: { accounts: [{ token: '1:a', apiroot: 'http://127.0.0.1:1' }] },
          whatsapp: { dmPolicyy: 'open' },
        },
      }),
    );
    const loaded = await loadBotConfig({ configFile: file, env: {}, baseDir: dir });
    expect(loaded.ok).toBe(false);
    if (loaded.ok) return;
    const message = formatIssues(loaded.issues);
    expect(message).toContain(
      'channels.discord.accounts[0].gatewayURL: unknown setting; allowed: accountId, token, tokenEnv, ' +
        'apiRoot, gatewayUrl; did you mean "gatewayUrl"?',
    );
    expect(message).toContain('channels.telegram.accounts[0].apiroot: unknown setting; allowed: accountId,');
    expect(message).toContain('; did you mean "apiRoot"?');
    expect(message).toContain('channels.whatsapp.dmPolicyy: unknown setting; allowed: enabled,');
    expect(message).toContain(
      'app.logLevle: unknown setting; allowed: stateDir, owners, logLevel; did you mean "logLevel"?',
    );
    expect(message).toContain('sesion: unknown setting; allowed: session,');
    expect(message).not.toContain('Unexpected property');
  });

  it('resolves the state dir: flag, then app.stateDir beside the file, then COLLOQUY_STATE_DIR', async () => {
    const file = write('c.json5', '{ app: { stateDir: "data" } }');
    const fromFile = await loadBotConfig({
      configFile: file,
      env: { COLLOQUY_STATE_DIR: '/elsewhere' },
      baseDir: '/',
    });
    expect(fromFile.ok && fromFile.config.stateDir).toBe(join(dir, 'data'));
    const fromFlag = await loadBotConfig({ configFile: file, stateDir: 'flagged', env: {}, baseDir: dir });
    expect(fromFlag.ok && fromFlag.config.stateDir).toBe(join(dir, 'flagged'));
    const fromEnv = await loadBotConfig({ env: { COLLOQUY_STATE_DIR: 'envdir' }, baseDir: dir });
    expect(fromEnv.ok && fromEnv.config.stateDir).toBe(join(dir, 'envdir'));
  });

  it('accepts the template `colloquy init` writes', async () => {
    expect(() => JSON5.parse(CONFIG_TEMPLATE)).not.toThrow();
    const loaded = await loadBotConfig({
      configFile: write('t.json5', CONFIG_TEMPLATE),
      env: {},
      baseDir: dir,
    });
    expect(loaded.ok ? [] : loaded.issues).toEqual([]);
  });
});
