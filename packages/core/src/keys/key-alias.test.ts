import { describe, expect, it } from 'vitest';
import {
  isReservedSessionKey,
  type KeyContext,
  mainSessionKey,
  resolveSessionKeyAlias,
  toDisplayKey,
  tryResolveSessionKey,
} from './key-alias.js';

const perSender: KeyContext = { agentId: 'main', mainKey: 'main', scope: 'per-sender' };
const global: KeyContext = { agentId: 'main', mainKey: 'main', scope: 'global' };
const custom: KeyContext = { agentId: 'Research', mainKey: 'home', scope: 'per-sender' };

describe('resolveSessionKeyAlias', () => {
  it('maps main, in any spelling, to the current agent main key', () => {
    expect(resolveSessionKeyAlias('main', perSender)).toBe('agent:main:main');
    expect(resolveSessionKeyAlias('  MAIN ', perSender)).toBe('agent:main:main');
    expect(resolveSessionKeyAlias('main', custom)).toBe('agent:research:home');
  });

  it('maps global to main only when the session scope is global', () => {
    expect(resolveSessionKeyAlias('global', global)).toBe('agent:main:main');
    expect(resolveSessionKeyAlias('Global', perSender)).toBe('global');
  });

  it('normalises every other key and leaves it otherwise alone', () => {
    expect(resolveSessionKeyAlias(' Agent:Other:MAIN ', perSender)).toBe('agent:other:main');
    expect(resolveSessionKeyAlias('agent:main:telegram:group:-1', perSender)).toBe(
      'agent:main:telegram:group:-1',
    );
  });
});

describe('toDisplayKey', () => {
  it('shows the current agent main key as main', () => {
    expect(toDisplayKey('agent:main:main', perSender)).toBe('main');
    expect(toDisplayKey('AGENT:Research:Home', custom)).toBe('main');
  });

  it('shows other agents main keys and threads of main in full', () => {
    expect(toDisplayKey('agent:other:main', perSender)).toBe('agent:other:main');
    expect(toDisplayKey('agent:main:main:thread:9', perSender)).toBe('agent:main:main:thread:9');
  });

  it('never shows global under the global scope', () => {
    expect(toDisplayKey('global', global)).toBe('main');
  });

  it('shows the other keys in their normalised form', () => {
    expect(toDisplayKey(' Agent:Main:Discord:CHANNEL:42 ', perSender)).toBe('agent:main:discord:channel:42');
  });
});

describe('mainSessionKey', () => {
  it('is agent:<agentId>:<mainKey>, normalised', () => {
    expect(mainSessionKey(custom)).toBe('agent:research:home');
  });
});

describe('isReservedSessionKey', () => {
  it('is true for global and unknown in any spelling', () => {
    for (const key of ['global', ' GLOBAL ', 'unknown', 'Unknown'])
      expect(isReservedSessionKey(key)).toBe(true);
  });

  it('is false for real keys and for main', () => {
    for (const key of ['main', 'agent:main:main', 'agent:main:global', 'globalx']) {
      expect(isReservedSessionKey(key)).toBe(false);
    }
  });
});

describe('tryResolveSessionKey', () => {
  it('resolves a key from a model to the internal key, its display form and kind', () => {
    expect(tryResolveSessionKey(' Main ', perSender)).toMatchObject({
      ok: true,
      key: 'agent:main:main',
      displayKey: 'main',
      kind: 'main',
    });
    expect(tryResolveSessionKey('agent:main:Telegram:DM:42', perSender)).toMatchObject({
      ok: true,
      key: 'agent:main:telegram:dm:42',
      kind: 'dm',
      parsed: { type: 'dm', peerId: '42' },
    });
  });

  it('refuses reserved keys with a hint', () => {
    const result = tryResolveSessionKey('unknown', perSender);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.error.code).toBe('INVALID_ARGUMENT');
      expect(result.error.message).toMatch(/reserved.*"main"/);
    }
    expect(tryResolveSessionKey('global', perSender).ok).toBe(false);
    expect(tryResolveSessionKey('global', global)).toMatchObject({ ok: true, key: 'agent:main:main' });
  });

  it('refuses malformed input without throwing', () => {
    for (const raw of [undefined, null, 12, {}, '', 'agent::x']) {
      const result = tryResolveSessionKey(raw, perSender);
      expect(result.ok).toBe(false);
    }
  });
});
