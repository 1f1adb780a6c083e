import { Value } from '@sinclair/typebox/value';
import { describe, expect, it } from 'vitest';
import { isColloquyError } from '../errors/colloquy-error.js';
import { checkConfig, DEFAULT_CONFIG, resolveConfig } from './resolve-config.js';
import { ColloquyConfigSchema } from './schema.js';

function issuesOf(input: unknown) {
  const result = checkConfig(input);
  if (result.ok) throw new Error('expected the config to be refused');
  return result.issues;
}

function errorOf(input: unknown) {
  try {
    resolveConfig(input);
  } catch (error) {
    if (isColloquyError(error)) return error;
    throw error;
  }
  throw new Error('expected resolveConfig to throw');
}

describe('resolveConfig defaults', () => {
  it('fills every documented default from an empty object', () => {
    const config = resolveConfig({});
    expect(config.session).toEqual({
      mainKey: 'main',
      scope: 'per-sender',
      dmScope: 'per-channel-peer',
      sendPolicy: { rules: [], default: 'allow' },
      agentToAgent: { maxPingPongTurns: 5, maxHops: 8 },
      groupContext: {
        enabled: true,
        maxMessages: 20,
        maxAgeMinutes: 60,
        maxCharsPerMessage: 1000,
        exclude: [],
      },
    });
    expect(config.tools.sessions.visibility).toBe('tree');
    expect(config.tools.agentToAgent).toEqual({ enabled: false, allow: [] });
    expect(config.tools.sessions_spawn.attachments).toEqual({
      enabled: false,
      maxFiles: 50,
      maxFileBytes: 1_048_576,
      maxTotalBytes: 5_242_880,
      retainOnSessionKeep: false,
    });
    expect(config.tools.subagents.tools).toEqual({});
    expect(config.agents.defaults.subagents).toEqual({
      maxSpawnDepth: 1,
      maxChildrenPerAgent: 5,
      runTimeoutSeconds: 0,
      archiveAfterMinutes: 60,
    });
    expect(config.agents.defaults.sandbox).toEqual({ enabled: false, sessionToolsVisibility: 'spawned' });
    expect(config.agents.list).toEqual([{ id: 'main', default: true }]);
    expect(config.models).toEqual({ providers: {}, prices: {}, contextWindowTokens: 128_000 });
    expect(config.runtime).toEqual({
      lanes: { main: 256, subagent: 64, cron: 8 },
      maxSteps: 8,
      staleRunMinutes: 10,
      maxRunAttempts: 3,
      maxQueuedPerSession: 50,
      shutdownDrainMs: 5000,
      deliveryRetry: { firstDelayMs: 1000, maxDelayMs: 15_000, maxAgeMinutes: 15 },
      historyCacheMiB: 64,
    });
    expect(config.gateway).toEqual({
      host: '127.0.0.1',
      port: 7421,
      mcp: {
        enabled: true,
        allowedHosts: ['localhost', '127.0.0.1', '[::1]'],
        allowedOrigins: ['localhost', '127.0.0.1', '[::1]'],
      },
    });
    expect(config.redaction.secrets).toEqual([]);
    expect(config.channels).toEqual({});
  });

  it('treats undefined as an empty config', () => {
    expect(resolveConfig(undefined)).toEqual(resolveConfig({}));
  });

  it('keeps given values and fills the siblings around them', () => {
    const config = resolveConfig({
      session: { agentToAgent: { maxPingPongTurns: 2 } },
      tools: { sessions_spawn: { attachments: { enabled: true } } },
      agents: { defaults: { sandbox: { enabled: true } } },
    });
    expect(config.session.agentToAgent).toEqual({ maxPingPongTurns: 2, maxHops: 8 });
    expect(config.session.mainKey).toBe('main');
    expect(config.tools.sessions_spawn.attachments.enabled).toBe(true);
    expect(config.tools.sessions_spawn.attachments.maxFiles).toBe(50);
    expect(config.agents.defaults.sandbox).toEqual({ enabled: true, sessionToolsVisibility: 'spawned' });
  });

  it('passes channel sections through untouched for plugins to validate', () => {
    const telegram = { token: 'x', anything: { nested: [1, 2] } };
    expect(resolveConfig({ channels: { telegram } }).channels).toEqual({ telegram });
  });

  it('accepts any provider and price names', () => {
    const config = resolveConfig({
      models: {
        providers: { 'my-vllm': { kind: 'openai-compatible', baseURL: 'http://127.0.0.1:8000/v1' } },
        prices: { 'my-vllm/qwen': { inputPerMTokUsd: 0.1, outputPerMTokUsd: 0.2 } },
      },
    });
    expect(config.models.providers['my-vllm']?.kind).toBe('openai-compatible');
    expect(config.models.prices['my-vllm/qwen']?.outputPerMTokUsd).toBe(0.2);
  });

  it('names a misspelt field inside a provider or price entry', () => {
    const result = checkConfig({
      models: {
        providers: { local: { kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:11434/v1' } },
        prices: { 'local/m': { inputPerMTokUsd: 1, outputPerMtokUsd: 2 } },
      },
    });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    const paths = result.issues.map((issue) => issue.path);
    expect(paths).toContain('models.providers.local.baseUrl');
    expect(paths).toContain('models.prices["local/m"].outputPerMtokUsd');
    expect(result.issues[0]?.expected).toContain('did you mean "baseURL"');
  });

  it('never modifies its input', () => {
    const input = { session: { agentToAgent: { maxHops: 3 } } };
    const snapshot = structuredClone(input);
    resolveConfig(input);
    expect(input).toEqual(snapshot);
  });

  it('returns a config that satisfies its own schema', () => {
    expect(Value.Check(ColloquyConfigSchema, resolveConfig({ agents: { list: [{ id: 'a' }] } }))).toBe(true);
  });
});

describe('DEFAULT_CONFIG', () => {
  it('equals the resolved empty config and is deeply frozen', () => {
    expect(DEFAULT_CONFIG).toEqual(resolveConfig({}));
    expect(Object.isFrozen(DEFAULT_CONFIG)).toBe(true);
    expect(Object.isFrozen(DEFAULT_CONFIG.session.sendPolicy.rules)).toBe(true);
    expect(Object.isFrozen(DEFAULT_CONFIG.agents.list[0])).toBe(true);
  });

  it('is not shared with configs returned later', () => {
    const config = resolveConfig({});
    config.session.sendPolicy.rules.push({ match: {}, action: 'deny' });
    expect(DEFAULT_CONFIG.session.sendPolicy.rules).toEqual([]);
    expect(resolveConfig({}).session.sendPolicy.rules).toEqual([]);
  });
});

describe('resolveConfig errors', () => {
  it('throws one CONFIG_INVALID naming the path, the expected range and the value found', () => {
    const error = errorOf({ session: { agentToAgent: { maxPingPongTurns: 9 } } });
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.message).toContain('session.agentToAgent.maxPingPongTurns: expected integer 0..5, got 9');
    expect(error.details.issues).toEqual([
      { path: 'session.agentToAgent.maxPingPongTurns', expected: 'integer 0..5', got: '9' },
    ]);
  });

  it('lists every bad setting, not just the first', () => {
    const error = errorOf({
      session: { dmScope: 'per-person', agentToAgent: { maxHops: 0 } },
      tools: { sessions: { visibility: 'everyone' }, agentToAgent: { enabled: 'yes' } },
      runtime: { lanes: { main: 1.5 } },
      gateway: { port: 70_000 },
    });
    const paths = (error.details.issues as { path: string }[]).map((i) => i.path).sort();
    expect(paths).toEqual([
      'gateway.port',
      'runtime.lanes.main',
      'session.agentToAgent.maxHops',
      'session.dmScope',
      'tools.agentToAgent.enabled',
      'tools.sessions.visibility',
    ]);
    for (const path of paths) expect(error.message).toContain(`${path}: expected`);
    expect(error.message).toContain(
      'tools.sessions.visibility: expected one of "self" | "tree" | "agent" | "all", got "everyone"',
    );
    expect(error.message).toContain('tools.agentToAgent.enabled: expected true or false, got "yes"');
  });

  it('reports unknown keys with the closest known key', () => {
    const issues = issuesOf({ sesion: { mainKey: 'main' }, tools: { session: {} } });
    expect(issues).toContainEqual(
      expect.objectContaining({ path: 'sesion', got: 'unknown setting', suggestion: 'session' }),
    );
    expect(issues.find((i) => i.path === 'sesion')?.expected).toContain('did you mean "session"?');
    expect(issues.find((i) => i.path === 'tools.session')?.expected).toContain('did you mean "sessions"?');
  });

  it('reports unknown keys inside nested settings and rules', () => {
    const issues = issuesOf({
      session: { sendPolicy: { rules: [{ match: { chanel: 'discord' }, action: 'deny' }] } },
      agents: { defaults: { subagents: { maxDepth: 2 } } },
    });
    expect(issues.map((i) => i.path).sort()).toEqual([
      'agents.defaults.subagents.maxDepth',
      'session.sendPolicy.rules[0].match.chanel',
    ]);
  });

  it('names array items by index and map entries by their key', () => {
    const issues = issuesOf({
      agents: { list: [{ id: 'main' }, { id: 'Bad Id' }] },
      models: { prices: { 'openai/gpt-4o': { inputPerMTokUsd: -1, outputPerMTokUsd: 1 } } },
    });
    expect(issues.map((i) => i.path)).toEqual(
      expect.arrayContaining(['agents.list[1].id', 'models.prices["openai/gpt-4o"].inputPerMTokUsd']),
    );
  });

  it('reports a missing required field as got nothing', () => {
    const issues = issuesOf({ agents: { list: [{ name: 'no id' }] } });
    expect(issues).toContainEqual(expect.objectContaining({ path: 'agents.list[0].id', got: 'nothing' }));
  });

  it('refuses a model that is not provider/model', () => {
    const issues = issuesOf({ agents: { defaults: { model: 'gpt-4o' } } });
    expect(issues[0]).toMatchObject({ path: 'agents.defaults.model', got: '"gpt-4o"' });
    expect(issues[0]?.expected).toContain('provider/model');
  });

  it('refuses a tool allow pattern with characters a tool name cannot have, naming the item', () => {
    const issues = issuesOf({
      agents: { list: [{ id: 'main', tools: { allow: ['github__*', 'fs/read'] } }] },
    });
    expect(issues).toEqual([
      {
        path: 'agents.list[0].tools.allow[1]',
        expected: 'a tool name or a pattern with "*" (letters, digits, "_", "-"), e.g. "github__*"',
        got: '"fs/read"',
      },
    ]);
  });

  it('refuses an empty agent list', () => {
    expect(issuesOf({ agents: { list: [] } })).toEqual([
      { path: 'agents.list', expected: 'an array with at least 1 item', got: 'an array of 0' },
    ]);
  });

  it('refuses duplicate agent ids and a second default agent', () => {
    const issues = issuesOf({
      agents: { list: [{ id: 'a', default: true }, { id: 'b', default: true }, { id: 'a' }] },
    });
    expect(issues.map((i) => i.path)).toEqual(['agents.list[1].default', 'agents.list[2].id']);
  });

  it('reports cross-field problems alongside type problems', () => {
    const issues = issuesOf({ gateway: { port: -1 }, agents: { list: [{ id: 'a' }, { id: 'a' }] } });
    expect(issues.map((i) => i.path).sort()).toEqual(['agents.list[1].id', 'gateway.port']);
  });

  it('refuses configured secrets too short to redact safely', () => {
    expect(issuesOf({ redaction: { secrets: ['abc'] } })[0]?.path).toBe('redaction.secrets[0]');
  });

  it('never echoes the value of a secret-looking setting', () => {
    const issues = issuesOf({ redaction: { secrets: ['abc'] }, gateway: { token: '' } });
    for (const issue of issues) expect(issue.got).toBe('a string (value hidden)');
  });

  it('refuses a config that is not an object', () => {
    for (const input of [null, 5, 'config', [1]]) {
      expect(issuesOf(input)).toEqual([expect.objectContaining({ path: '(root)', expected: 'an object' })]);
    }
  });

  it('says what to do next', () => {
    expect(errorOf({ gateway: { port: 'x' } }).message).toMatch(/Fix these settings/);
  });
});
