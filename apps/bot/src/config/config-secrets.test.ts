import { ColloquyConfigSchema } from '@colloquy/core';
import { DiscordConfigSchema } from '@colloquy/plugin-discord';
import { TelegramConfigSchema } from '@colloquy/plugin-telegram';
import { WhatsAppConfigSchema } from '@colloquy/plugin-whatsapp';
import { describe, expect, it } from 'vitest';
import { AppSectionSchema, StorageSectionSchema, WebChatSectionSchema } from './app-schema.js';
import { collectConfigSecrets, SECRET_SETTING, SECRET_VARIABLE_SETTING } from './config-secrets.js';

describe('collectConfigSecrets', () => {
  it('finds every secret the config holds, from the file or through a variable it names', () => {
    const input = {
      gateway: { token: 'gateway-token-1' },
      models: {
        providers: {
          inline: { kind: 'openai-compatible', baseURL: 'http://x', apiKey: 'sk-inline-key' },
          named: { kind: 'anthropic', apiKeyEnv: 'MY_ANTHROPIC_KEY' },
        },
      },
      channels: {
        telegram: {
          accounts: [
            { token: '123456:from-the-file', webhook: { path: '/tg', secretToken: 'webhook-secret-1' } },
          ],
        },
        discord: { accounts: [{ token: 'discord-inline-token' }, { tokenEnv: 'SECOND_DISCORD_TOKEN' }] },
      },
      storage: { url: 'postgres://bot:db-password-1@db:5432/colloquy' },
      redaction: { secrets: ['already-listed'] },
    };
    const env = { MY_ANTHROPIC_KEY: 'sk-ant-from-env', SECOND_DISCORD_TOKEN: 'discord-env-token' };
    expect(collectConfigSecrets(input, env).sort()).toEqual(
      [
        'gateway-token-1',
        'sk-inline-key',
        'sk-ant-from-env',
        '123456:from-the-file',
        'webhook-secret-1',
        'discord-inline-token',
        'discord-env-token',
        'db-password-1',
      ].sort(),
    );
  });

  it('ignores short values, which would redact ordinary text', () => {
    expect(collectConfigSecrets({ gateway: { token: 'abc' } }, {})).toEqual([]);
  });

  it('covers every secret-looking setting of every config schema, so a new one cannot be forgotten', () => {
    const names = new Set<string>();
    const walk = (schema: unknown, depth: number): void => {
      if (typeof schema !== 'object' || schema === null || depth > 40) return;
      const s = schema as Record<string, unknown>;
      for (const [name, inner] of Object.entries((s.properties as Record<string, unknown>) ?? {})) {
        names.add(name);
        walk(inner, depth + 1);
      }
      for (const key of ['items', 'additionalProperties', 'anyOf', 'oneOf', 'allOf', 'patternProperties']) {
        const inner = s[key];
        if (Array.isArray(inner)) for (const item of inner) walk(item, depth + 1);
        else if (key === 'patternProperties' && inner)
          for (const item of Object.values(inner)) walk(item, depth + 1);
        else walk(inner, depth + 1);
      }
    };
    for (const schema of [
      ColloquyConfigSchema,
      TelegramConfigSchema,
      DiscordConfigSchema,
      WhatsAppConfigSchema,
      AppSectionSchema,
      WebChatSectionSchema,
      StorageSectionSchema,
    ]) {
      walk(schema, 0);
    }
    // Names that look secret but hold none: key shapes and token counts.
    const notSecret = new Set([
      'mainKey',
      'keyPrefix',
      'contextWindowTokens',
      'tokensPerMinute',
      'secrets',
      'url',
    ]);
    const looksSecret = [...names].filter(
      (n) => /token|secret|pass|key|cred|auth/i.test(n) && !notSecret.has(n),
    );
    expect(looksSecret.length).toBeGreaterThan(3);
    for (const name of looksSecret) {
      expect(SECRET_SETTING.test(name) || SECRET_VARIABLE_SETTING.test(name), name).toBe(true);
    }
  });
});
