import { describe, expect, it } from 'vitest';
import { resolveSlackConfig } from './config.js';
import { chatTypeOf, checkAccess, isPersonMessage, readableText } from './inbound.js';

describe('readableText', () => {
  it('drops the bot’s mention and reads other markup as a person would', () => {
    expect(readableText('<@UBOT> hi <@U2|ada>, see <#C1|general> and <https://x.example|docs>', 'UBOT')).toBe(
      'hi @ada, see #general and docs (https://x.example)',
    );
    expect(readableText('a &lt;b&gt; &amp;&amp; <!here> <https://y.example>', 'UBOT')).toBe(
      'a <b> && @here https://y.example',
    );
  });
});

describe('inbound filtering', () => {
  it('keeps people’s messages and file shares, and drops bots, edits and joins', () => {
    const base = { type: 'message' as const, channel: 'C1', ts: '1.000001', user: 'U1' };
    expect(isPersonMessage(base)).toBe(true);
    expect(isPersonMessage({ ...base, subtype: 'file_share' })).toBe(true);
    expect(isPersonMessage({ ...base, bot_id: 'B1' })).toBe(false);
    expect(isPersonMessage({ ...base, subtype: 'message_changed' })).toBe(false);
    expect(isPersonMessage({ ...base, subtype: 'channel_join' })).toBe(false);
  });

  it('types DMs, group DMs and channels, from channel_type or the id', () => {
    expect(chatTypeOf('D1', 'im')).toBe('direct');
    expect(chatTypeOf('G1', 'mpim')).toBe('group');
    expect(chatTypeOf('C1', 'channel')).toBe('channel');
    expect(chatTypeOf('D1')).toBe('direct');
    expect(chatTypeOf('C1')).toBe('channel');
  });

  it('applies allowChannels to conversations but not DMs, and the most specific allowUsers', () => {
    const config = resolveSlackConfig({
      accounts: [{ botToken: 'xoxb-1', appToken: 'xapp-1' }],
      allowChannels: ['C1'],
      allowUsers: ['U1'],
      channels: { C1: { allowUsers: ['U2'] } },
    });
    expect(checkAccess(config, 'C9', 'U1', false)).toMatchObject({ allowed: false });
    expect(checkAccess(config, 'D9', 'U1', true)).toEqual({ allowed: true });
    expect(checkAccess(config, 'C1', 'U2', false)).toEqual({ allowed: true });
    expect(checkAccess(config, 'C1', 'U1', false)).toMatchObject({ allowed: false });
  });
});

describe('resolveSlackConfig', () => {
  it('asks for the app token in Socket Mode and the signing secret over HTTP, naming the path', () => {
    expect(() => resolveSlackConfig({ accounts: [{ botToken: 'xoxb-1' }] })).toThrow(
      /channels\.slack\.accounts\[0\]\.appToken/,
    );
    expect(() => resolveSlackConfig({ mode: 'http', accounts: [{ botToken: 'xoxb-1' }] })).toThrow(
      /channels\.slack\.accounts\[0\]\.signingSecret/,
    );
    expect(resolveSlackConfig({ accounts: [{ botTokenEnv: 'B', appTokenEnv: 'A' }] })).toMatchObject({
      mode: 'socket',
      requireMentionByDefault: true,
      http: { host: '127.0.0.1', port: 3000, path: '/slack/events' },
    });
  });
});
