import { describe, expect, it } from 'vitest';
import type { SessionRecord } from '../interfaces/records.js';
import { agentIdFromSessionKey, classifySessionKey, deriveChannelField } from './classify-session-key.js';

describe('classifySessionKey', () => {
  it.each([
    ['main', 'main'],
    ['agent:main:main', 'main'],
    ['agent:main:main:thread:5', 'main'],
    ['agent:main:telegram:dm:42', 'dm'],
    ['agent:main:dm:42', 'dm'],
    ['agent:main:telegram:bot:dm:42', 'dm'],
    ['agent:main:telegram:group:-100', 'group'],
    ['agent:main:discord:channel:1:thread:2', 'group'],
    ['agent:main:subagent:abc', 'subagent'],
    ['cron:nightly', 'cron'],
    ['agent:main:cron:nightly', 'cron'],
    ['hook:x', 'hook'],
    ['node-kitchen', 'node'],
    ['agent:main:something', 'other'],
    ['custom', 'other'],
    ['global', 'other'],
    ['unknown', 'other'],
    ['agent::bad', 'other'],
  ] as const)('classifies %s as %s', (key, kind) => {
    expect(classifySessionKey(key)).toBe(kind);
  });

  it('uses the configured main key', () => {
    expect(classifySessionKey('agent:main:home', { mainKey: 'home' })).toBe('main');
    expect(classifySessionKey('agent:main:main', { mainKey: 'home' })).toBe('other');
  });

  it('ignores spelling', () => {
    expect(classifySessionKey(' AGENT:Main:Telegram:GROUP:X ')).toBe('group');
  });
});

describe('agentIdFromSessionKey', () => {
  it('reads the agent id of agent keys, lower-cased', () => {
    expect(agentIdFromSessionKey('agent:Research:subagent:1')).toBe('research');
    expect(agentIdFromSessionKey('agent:ops:odd:shape:here')).toBe('ops');
    expect(agentIdFromSessionKey('agent:ops:cron:x')).toBe('ops');
  });

  it('is undefined when the key names no agent', () => {
    for (const key of ['main', 'cron:x', 'hook:y', 'node-z', 'custom', 'agent::x']) {
      expect(agentIdFromSessionKey(key)).toBeUndefined();
    }
  });
});

describe('deriveChannelField', () => {
  const base: SessionRecord = {
    key: 'agent:main:main',
    sessionId: 's',
    agentId: 'main',
    kind: 'main',
    createdAt: 0,
    updatedAt: 0,
  };

  it('shows the recorded channel for groups', () => {
    expect(
      deriveChannelField({ ...base, key: 'agent:main:discord:group:1', kind: 'group', channel: 'discord' }),
    ).toBe('discord');
  });

  it('falls back to the channel named in a group key', () => {
    expect(deriveChannelField({ ...base, key: 'agent:main:telegram:group:1', kind: 'group' })).toBe(
      'telegram',
    );
  });

  it('shows the last channel for direct chats and main', () => {
    expect(deriveChannelField({ ...base, lastChannel: 'whatsapp' })).toBe('whatsapp');
    expect(
      deriveChannelField({
        ...base,
        key: 'agent:main:dm:1',
        kind: 'dm',
        chatType: 'direct',
        lastChannel: 'webchat',
      }),
    ).toBe('webchat');
  });

  it('shows internal for cron, hook and node sessions', () => {
    for (const kind of ['cron', 'hook', 'node'] as const) {
      expect(deriveChannelField({ ...base, key: `${kind}:x`, kind, lastChannel: 'telegram' })).toBe(
        'internal',
      );
    }
  });

  it('shows unknown when nothing says', () => {
    expect(deriveChannelField(base)).toBe('unknown');
    expect(deriveChannelField({ ...base, key: 'agent:main:subagent:1', kind: 'subagent' })).toBe('unknown');
    expect(deriveChannelField({ ...base, key: 'x', kind: 'other' })).toBe('unknown');
  });
});
