import { isColloquyError } from '@colloquy/core';
import { Value } from '@sinclair/typebox/value';
import { describe, expect, it } from 'vitest';
import { resolveTelegramConfig, TelegramConfigSchema } from './config.js';

const TOKEN = '123456:ABC-def_ghi';

function issuesOf(section: unknown): { path: string; expected: string; got: string }[] {
  try {
    resolveTelegramConfig(section);
  } catch (error) {
    if (isColloquyError(error) && error.code === 'CONFIG_INVALID') {
      return error.details.issues as { path: string; expected: string; got: string }[];
    }
    throw error;
  }
  throw new Error('expected CONFIG_INVALID');
}

describe('resolveTelegramConfig', () => {
  it('applies defaults to an empty section and to each account', () => {
    expect(resolveTelegramConfig(undefined)).toEqual({
      accounts: [],
      dmPolicy: 'pairing',
      allowFrom: [],
      groupPolicy: 'open',
      groups: {},
      requireMentionByDefault: true,
    });
    const config = resolveTelegramConfig({ accounts: [{ token: TOKEN }] });
    expect(config.accounts).toEqual([{ accountId: 'default', token: TOKEN, mode: 'polling' }]);
  });

  it('accepts a full section that matches the schema', () => {
    const section = {
      accounts: [
        { accountId: 'main', token: TOKEN, apiRoot: 'http://127.0.0.1:8081', mode: 'polling' },
        {
          accountId: 'hook',
          token: '999:xyz',
          mode: 'webhook',
          webhook: {
            path: '/telegram/hook',
            secretToken: 'a-secret-token-1234',
            url: 'https://bot.example.com/telegram/hook',
          },
        },
      ],
      dmPolicy: 'allowlist',
      allowFrom: ['42', '@alice'],
      groups: { '-1001': { requireMention: false } },
      requireMentionByDefault: false,
    };
    const config = resolveTelegramConfig(section);
    expect(config).toMatchObject(section);
    expect(Value.Check(TelegramConfigSchema, config)).toBe(true);
  });

  it('names the path, the expectation and the value of each problem', () => {
    const issues = issuesOf({ accounts: [{ token: TOKEN, mode: 'carrier-pigeon' }], dmPolicy: 'everyone' });
    expect(issues.map((i) => i.path)).toEqual(
      expect.arrayContaining(['channels.telegram.accounts[0].mode', 'channels.telegram.dmPolicy']),
    );
    expect(issues.find((i) => i.path === 'channels.telegram.dmPolicy')?.got).toBe('"everyone"');
  });

  it('rejects unknown keys, naming the settings allowed there and the one meant', () => {
    expect(issuesOf({ dmpolicy: 'open' }).map((i) => i.path)).toContain('channels.telegram.dmpolicy');
    expect(() =>
      resolveTelegramConfig({ accounts: [{ token: TOKEN, apiroot: 'http://127.0.0.1:1' }] }),
    ).toThrow(
      'channels.telegram.accounts[0].apiroot: unknown setting; allowed: accountId, token, apiRoot, mode, ' +
        'webhook; did you mean "apiRoot"?',
    );
  });

  it('never echoes a token in an error', () => {
    const secret = 'not a token but secret';
    const issues = issuesOf({ accounts: [{ token: secret }] });
    expect(issues[0]?.path).toBe('channels.telegram.accounts[0].token');
    expect(JSON.stringify(issues)).not.toContain(secret);
  });

  it('rejects duplicate account ids and tokens', () => {
    const issues = issuesOf({ accounts: [{ token: TOKEN }, { token: TOKEN }] });
    expect(issues.map((i) => i.path)).toEqual([
      'channels.telegram.accounts[1].accountId',
      'channels.telegram.accounts[1].token',
    ]);
  });

  it('requires webhook settings in webhook mode, on distinct paths', () => {
    expect(issuesOf({ accounts: [{ token: TOKEN, mode: 'webhook' }] })[0]?.path).toBe(
      'channels.telegram.accounts[0].webhook',
    );
    const webhook = { path: '/tg', secretToken: 'a-secret-token-1234' };
    expect(
      issuesOf({
        accounts: [
          { accountId: 'a', token: TOKEN, mode: 'webhook', webhook },
          { accountId: 'b', token: '1:b', mode: 'webhook', webhook },
        ],
      })[0]?.path,
    ).toBe('channels.telegram.accounts[1].webhook.path');
    expect(
      issuesOf({
        accounts: [{ token: TOKEN, mode: 'webhook', webhook: { path: '/tg', secretToken: 'short' } }],
      })[0]?.path,
    ).toBe('channels.telegram.accounts[0].webhook.secretToken');
  });
});
