import { isColloquyError } from '@colloquy/core';
import { describe, expect, it } from 'vitest';
import { resolveAccountToken, resolveDiscordConfig } from './config.js';

function issuesOf(section: unknown): { path: string; expected: string; got: string }[] {
  try {
    resolveDiscordConfig(section);
  } catch (error) {
    if (isColloquyError(error) && error.code === 'CONFIG_INVALID') {
      return error.details.issues as { path: string; expected: string; got: string }[];
    }
    throw error;
  }
  throw new Error('expected CONFIG_INVALID');
}

describe('resolveDiscordConfig', () => {
  it('fills every default from a minimal section', () => {
    const config = resolveDiscordConfig({ accounts: [{ token: 'abc' }] });
    expect(config).toEqual({
      accounts: [{ accountId: 'default', token: 'abc' }],
      requireMentionByDefault: true,
      guilds: {},
      threadBindings: { idleMinutes: 1440 },
    });
  });

  it('does not mutate its input', () => {
    const section = { accounts: [{ token: 'abc' }] };
    resolveDiscordConfig(section);
    expect(section).toEqual({ accounts: [{ token: 'abc' }] });
  });

  it('names the path of a snowflake written as a number', () => {
    // What a JSON config file yields for an unquoted id: a number that already lost its last digits.
    const allowUsers: unknown = JSON.parse('[123456789012345678]');
    const issues = issuesOf({ accounts: [{ token: 'a' }], allowUsers });
    expect(issues).toContainEqual(
      expect.objectContaining({
        path: 'channels.discord.allowUsers[0]',
        expected: 'a Discord id as a quoted string of digits',
      }),
    );
  });

  it('reports nested per-guild mistakes and unknown keys', () => {
    const issues = issuesOf({
      accounts: [{ token: 'a' }],
      guilds: { '1': { requireMention: 'yes', channels: { '2': { requireMention: 1 } } } },
      threadBindings: { idleMinutes: -5 },
      colour: 'blue',
    });
    const paths = issues.map((issue) => issue.path);
    expect(paths).toContain('channels.discord.guilds["1"].requireMention');
    expect(paths).toContain('channels.discord.guilds["1"].channels["2"].requireMention');
    expect(paths).toContain('channels.discord.threadBindings.idleMinutes');
    expect(paths.some((path) => path.includes('colour'))).toBe(true);
  });

  it('accepts a REST root and a gateway URL per account, for a proxy', () => {
    const config = resolveDiscordConfig({
      accounts: [{ token: 'a', apiRoot: 'http://127.0.0.1:8080/api', gatewayUrl: 'ws://127.0.0.1:8081' }],
    });
    expect(config.accounts[0]).toMatchObject({
      apiRoot: 'http://127.0.0.1:8080/api',
      gatewayUrl: 'ws://127.0.0.1:8081',
    });
    expect(issuesOf({ accounts: [{ token: 'a', gatewayUrl: 'http://x' }] }).map((i) => i.path)).toEqual([
      'channels.discord.accounts[0].gatewayUrl',
    ]);
  });

  it('names the settings allowed where it finds an unknown one, and the one meant', () => {
    const section = { accounts: [{ accountId: 'main', token: 'a', gatewayURL: 'ws://127.0.0.1:1' }] };
    expect(issuesOf(section)).toEqual([
      expect.objectContaining({
        path: 'channels.discord.accounts[0].gatewayURL',
        got: 'unknown setting',
        allowed: ['accountId', 'token', 'tokenEnv', 'apiRoot', 'gatewayUrl'],
        suggestion: 'gatewayUrl',
      }),
    ]);
    expect(() => resolveDiscordConfig(section)).toThrow(
      'channels.discord.accounts[0].gatewayURL: unknown setting; allowed: accountId, token, tokenEnv, ' +
        'apiRoot, gatewayUrl; did you mean "gatewayUrl"?',
    );
  });

  it('requires at least one account, a token source for each, and unique account ids', () => {
    expect(issuesOf({}).map((i) => i.path)).toContain('channels.discord.accounts');
    expect(issuesOf({ accounts: [] }).map((i) => i.path)).toContain('channels.discord.accounts');
    expect(issuesOf({ accounts: [{ accountId: 'a' }] })).toEqual([
      {
        path: 'channels.discord.accounts[0].token',
        expected: 'a bot token, or tokenEnv naming a variable',
        got: 'nothing',
      },
    ]);
    expect(issuesOf({ accounts: [{ token: 'x' }, { token: 'y' }] }).map((i) => i.path)).toEqual([
      'channels.discord.accounts[1].accountId',
    ]);
  });

  it('says in its message which setting to fix', () => {
    expect(() => resolveDiscordConfig({ accounts: [{ token: 1 }] })).toThrow(
      /channels\.discord\.accounts\[0\]\.token/,
    );
  });
});

describe('resolveAccountToken', () => {
  it('reads tokenEnv from the environment and names the variable when it is unset', () => {
    const account = { accountId: 'ops', tokenEnv: 'OPS_TOKEN' };
    expect(resolveAccountToken(account, 0, { OPS_TOKEN: 'secret' })).toBe('secret');
    expect(() => resolveAccountToken(account, 2, {})).toThrow(
      /\$OPS_TOKEN.*channels\.discord\.accounts\[2\]\.token/,
    );
  });
});
