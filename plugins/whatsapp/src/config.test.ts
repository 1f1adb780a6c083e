import { isColloquyError } from '@colloquy/core';
import { describe, expect, it } from 'vitest';
import { resolveWhatsAppConfig } from './config.js';

const issuesOf = (section: unknown): { path: string; expected: string; got: string }[] => {
  try {
    resolveWhatsAppConfig(section);
  } catch (e) {
    if (isColloquyError(e) && e.code === 'CONFIG_INVALID') {
      return e.details.issues as { path: string; expected: string; got: string }[];
    }
    throw e;
  }
  throw new Error('expected CONFIG_INVALID');
};

describe('resolveWhatsAppConfig', () => {
  it('fills every default when the section is missing', () => {
    expect(resolveWhatsAppConfig(undefined)).toEqual({
      enabled: true,
      dmPolicy: 'pairing',
      allowFrom: [],
      selfChatMode: false,
      groups: {},
      requireMentionByDefault: true,
      chunkLength: 4000,
      readReceipts: false,
      maxMediaBytes: 20 * 1024 * 1024,
    });
  });

  it('keeps what the user wrote', () => {
    const config = resolveWhatsAppConfig({
      dmPolicy: 'allowlist',
      allowFrom: ['+15551234567'],
      groups: { '123@g.us': { requireMention: false } },
      chunkLength: 1000,
      stateDir: '/var/lib/bot/wa',
    });
    expect(config.dmPolicy).toBe('allowlist');
    expect(config.groups['123@g.us']?.requireMention).toBe(false);
    expect(config.chunkLength).toBe(1000);
    expect(config.stateDir).toBe('/var/lib/bot/wa');
  });

  it('names the path and the expected values of a bad enum', () => {
    expect(issuesOf({ dmPolicy: 'everyone' })).toEqual([
      {
        path: 'channels.whatsapp.dmPolicy',
        expected: 'one of "open" | "allowlist" | "pairing"',
        got: '"everyone"',
      },
    ]);
  });

  it('reports nested paths, wrong types and unknown keys together', () => {
    const issues = issuesOf({
      chunkLength: 'long',
      groups: { '1@g.us': { requireMention: 'yes' } },
      colour: 1,
    });
    const paths = issues.map((i) => i.path);
    expect(paths).toContain('channels.whatsapp.chunkLength');
    expect(paths).toContain('channels.whatsapp.groups["1@g.us"].requireMention');
    expect(paths).toContain('channels.whatsapp.colour');
  });

  it('names the settings allowed next to an unknown one, and the one meant', () => {
    expect(() => resolveWhatsAppConfig({ dmPolicyy: 'open' })).toThrow(
      /channels\.whatsapp\.dmPolicyy: unknown setting; allowed: enabled, stateDir, dmPolicy, .*; did you mean "dmPolicy"\?/,
    );
  });

  it('takes a ws:// or wss:// webSocketUrl and rejects any other', () => {
    expect(resolveWhatsAppConfig({ webSocketUrl: 'ws://127.0.0.1:9000/ws/chat' }).webSocketUrl).toBe(
      'ws://127.0.0.1:9000/ws/chat',
    );
    expect(resolveWhatsAppConfig({ webSocketUrl: 'wss://proxy.example/ws' }).webSocketUrl).toBe(
      'wss://proxy.example/ws',
    );
    for (const bad of [
      'https://web.whatsapp.com/ws/chat',
      'ws://',
      'ws://host/a b',
      'web.whatsapp.com',
      '',
    ]) {
      expect(issuesOf({ webSocketUrl: bad })[0]?.path).toBe('channels.whatsapp.webSocketUrl');
    }
  });

  it('rejects a chunk length too small to read', () => {
    expect(issuesOf({ chunkLength: 10 })[0]?.path).toBe('channels.whatsapp.chunkLength');
  });

  it('rejects a section that is not an object', () => {
    expect(issuesOf('whatsapp')).toEqual([
      { path: 'channels.whatsapp', expected: 'an object', got: '"whatsapp"' },
    ]);
  });
});
