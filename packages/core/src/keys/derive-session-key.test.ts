import { describe, expect, it } from 'vitest';
import { deriveSessionKey, type SessionKeyInput, subagentSessionKey } from './derive-session-key.js';
import { parseSessionKey } from './session-key.js';

const direct: SessionKeyInput = {
  agentId: 'main',
  channel: 'telegram',
  accountId: 'default',
  chatType: 'direct',
  peerId: 'User42',
};

describe('deriveSessionKey', () => {
  it('gives each person their own session per channel by default', () => {
    expect(deriveSessionKey(direct)).toBe('agent:main:telegram:dm:User42');
    expect(deriveSessionKey(direct, { dmScope: 'per-channel-peer', mainKey: 'main' })).toBe(
      'agent:main:telegram:dm:User42',
    );
  });

  it('follows each dmScope', () => {
    expect(deriveSessionKey(direct, { dmScope: 'per-peer', mainKey: 'main' })).toBe('agent:main:dm:User42');
    expect(deriveSessionKey(direct, { dmScope: 'per-account-channel-peer', mainKey: 'main' })).toBe(
      'agent:main:telegram:default:dm:User42',
    );
    expect(deriveSessionKey(direct, { dmScope: 'main', mainKey: 'home' })).toBe('agent:main:home');
  });

  it('keys groups and channels by chat, whatever the dmScope', () => {
    for (const dmScope of ['main', 'per-peer'] as const) {
      expect(
        deriveSessionKey({ ...direct, chatType: 'group', peerId: '-100123' }, { dmScope, mainKey: 'main' }),
      ).toBe('agent:main:telegram:group:-100123');
    }
    expect(deriveSessionKey({ ...direct, channel: 'discord', chatType: 'channel', peerId: '99' })).toBe(
      'agent:main:discord:channel:99',
    );
  });

  it('adds a thread or topic suffix', () => {
    expect(
      deriveSessionKey({ ...direct, channel: 'discord', chatType: 'channel', peerId: '1', threadId: '2' }),
    ).toBe('agent:main:discord:channel:1:thread:2');
    expect(
      deriveSessionKey({ ...direct, chatType: 'group', peerId: '-1', threadId: '7', threadKind: 'topic' }),
    ).toBe('agent:main:telegram:group:-1:topic:7');
    expect(deriveSessionKey({ ...direct, threadId: '3' }, { dmScope: 'main', mainKey: 'main' })).toBe(
      'agent:main:main:thread:3',
    );
  });

  it('ignores a blank threadId', () => {
    expect(deriveSessionKey({ ...direct, threadId: ' ' })).toBe('agent:main:telegram:dm:User42');
  });

  it('normalises agent and channel ids and keeps platform ids as they are', () => {
    expect(
      deriveSessionKey(
        { ...direct, agentId: ' Main ', channel: 'Telegram', accountId: 'Bot' },
        {
          dmScope: 'per-account-channel-peer',
        },
      ),
    ).toBe('agent:main:telegram:Bot:dm:User42');
  });

  it('keeps platform ids with colons intact', () => {
    const key = deriveSessionKey({ ...direct, channel: 'whatsapp', peerId: '1555:3@s.whatsapp.net' });
    const parsed = parseSessionKey(key);
    expect(parsed.ok && parsed.key.type === 'dm' && parsed.key.peerId).toBe('1555:3@s.whatsapp.net');
  });

  it('refuses empty ids', () => {
    expect(() => deriveSessionKey({ ...direct, peerId: '' })).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    );
    expect(() =>
      deriveSessionKey({ ...direct, accountId: '' }, { dmScope: 'per-account-channel-peer' }),
    ).toThrow(/accountId/);
  });
});

describe('subagentSessionKey', () => {
  it('uses the given id', () => {
    expect(subagentSessionKey('Research', 'abc')).toBe('agent:research:subagent:abc');
  });

  it('makes a fresh uuid per call otherwise', () => {
    const a = subagentSessionKey('main');
    const b = subagentSessionKey('main');
    expect(a).toMatch(
      /^agent:main:subagent:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(a).not.toBe(b);
  });
});
