import { describe, expect, it } from 'vitest';
import { applyEnvironment, environmentSecrets, OPENAI_DEFAULT_BASE_URL } from './env-overlay.js';

describe('applyEnvironment', () => {
  it('fills storage.url from COLLOQUY_DATABASE_URL unless the file sets it', () => {
    const url = 'postgres://bot:s3cret-pw@127.0.0.1:5432/colloquy';
    const filled = applyEnvironment({}, { COLLOQUY_DATABASE_URL: url });
    expect(filled.input).toEqual({ storage: { url } });
    expect(filled.applied).toEqual(['storage.url from COLLOQUY_DATABASE_URL']);
    const file = { storage: { url: 'postgres://other@db/x' } };
    expect(applyEnvironment(file, { COLLOQUY_DATABASE_URL: url }).input).toEqual(file);
  });

  it('fills the gateway and web chat ports, as numbers, unless the file sets them', () => {
    const env = { COLLOQUY_GATEWAY_PORT: '9101', COLLOQUY_WEBCHAT_PORT: '9100' };
    const filled = applyEnvironment({}, env);
    expect(filled.input).toEqual({ gateway: { port: 9101 }, channels: { webchat: { port: 9100 } } });
    expect(filled.applied).toEqual([
      'gateway.port from COLLOQUY_GATEWAY_PORT',
      'channels.webchat.port from COLLOQUY_WEBCHAT_PORT',
    ]);
    const file = { gateway: { port: 1 }, channels: { webchat: { port: 2, host: '127.0.0.1' } } };
    expect(applyEnvironment(file, env).input).toEqual(file);
    // Not a number: kept as written, so validation names the setting and the value.
    expect(applyEnvironment({}, { COLLOQUY_WEBCHAT_PORT: 'eighty' }).input).toEqual({
      channels: { webchat: { port: 'eighty' } },
    });
  });

  it('fills the model and an OpenAI-compatible provider named after it', () => {
    const { input, applied } = applyEnvironment(
      {},
      { COLLOQUY_MODEL: 'local/llama3.2', OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1' },
    );
    expect(input).toEqual({
      agents: { defaults: { model: 'local/llama3.2' } },
      models: { providers: { local: { kind: 'openai-compatible', baseURL: 'http://127.0.0.1:11434/v1' } } },
    });
    expect(applied).toEqual([
      'agents.defaults.model from COLLOQUY_MODEL',
      'models.providers.local from OPENAI_BASE_URL',
    ]);
  });

  it('uses the OpenAI API root and the key variable when only OPENAI_API_KEY is set', () => {
    const { input } = applyEnvironment(
      {},
      { COLLOQUY_MODEL: 'openai/gpt-4o-mini', OPENAI_API_KEY: 'sk-test-123' },
    );
    expect(input.models).toEqual({
      providers: {
        openai: { kind: 'openai-compatible', baseURL: OPENAI_DEFAULT_BASE_URL, apiKeyEnv: 'OPENAI_API_KEY' },
      },
    });
  });

  it('configures Anthropic for anthropic/ models when ANTHROPIC_API_KEY is set', () => {
    const { input } = applyEnvironment(
      {},
      { COLLOQUY_MODEL: 'anthropic/claude-sonnet-4-5', ANTHROPIC_API_KEY: 'sk-ant-xyz' },
    );
    expect(input.models).toEqual({ providers: { anthropic: { kind: 'anthropic' } } });
  });

  it('never overrides what the config file says', () => {
    const file = {
      agents: { defaults: { model: 'mine/m1' } },
      models: { providers: { mine: { kind: 'anthropic' } } },
      gateway: { token: 'from-file-token' },
      channels: { telegram: { accounts: [{ token: '1:file' }] } },
    };
    const { input, applied } = applyEnvironment(file, {
      COLLOQUY_MODEL: 'other/m2',
      OPENAI_BASE_URL: 'http://x/v1',
      COLLOQUY_TOKEN: 'env-token-123',
      TELEGRAM_BOT_TOKEN: '2:env',
    });
    expect(input).toEqual(file);
    expect(applied).toEqual([]);
  });

  it('turns channels on from tokens and COLLOQUY_WHATSAPP, filling empty account lists', () => {
    const { input } = applyEnvironment(
      { channels: { discord: { accounts: [], requireMentionByDefault: false } } },
      { TELEGRAM_BOT_TOKEN: '123:abc', DISCORD_BOT_TOKEN: 'd-token', COLLOQUY_WHATSAPP: 'yes' },
    );
    expect(input.channels).toEqual({
      discord: { accounts: [{ tokenEnv: 'DISCORD_BOT_TOKEN' }], requireMentionByDefault: false },
      telegram: { accounts: [{ token: '123:abc' }] },
      whatsapp: {},
    });
  });

  it('turns Slack on in Socket Mode when both its bot and app tokens are set, and not with one', () => {
    const both = applyEnvironment({}, { SLACK_BOT_TOKEN: 'xoxb-1', SLACK_APP_TOKEN: 'xapp-1' });
    expect(both.input.channels).toEqual({
      slack: { accounts: [{ botTokenEnv: 'SLACK_BOT_TOKEN', appTokenEnv: 'SLACK_APP_TOKEN' }] },
    });
    expect(applyEnvironment({}, { SLACK_BOT_TOKEN: 'xoxb-1' }).input.channels).toBeUndefined();
    expect(environmentSecrets({ SLACK_BOT_TOKEN: 'xoxb-secret', SLACK_APP_TOKEN: 'xapp-secret' })).toEqual([
      'xoxb-secret',
      'xapp-secret',
    ]);
  });

  it('does not modify its input', () => {
    const file = { channels: {} };
    applyEnvironment(file, { TELEGRAM_BOT_TOKEN: '123:abc' });
    expect(file).toEqual({ channels: {} });
  });

  it('lists the secret values in use for redaction, skipping very short ones', () => {
    expect(
      environmentSecrets({ OPENAI_API_KEY: 'sk-long-key', DISCORD_BOT_TOKEN: 'abc', PATH: '/bin' }),
    ).toEqual(['sk-long-key']);
  });
});
