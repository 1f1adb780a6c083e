import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isColloquyError } from '../errors/colloquy-error.js';
import { classifySessionKey } from './classify-session-key.js';
import {
  formatSessionKey,
  MAX_SESSION_KEY_LENGTH,
  normalizeSessionKey,
  type ParsedSessionKey,
  parseSessionKey,
} from './session-key.js';

function parsed(key: unknown): ParsedSessionKey {
  const result = parseSessionKey(key);
  if (!result.ok) throw new Error(`expected ${String(key)} to parse: ${result.error.message}`);
  return result.key;
}

function parseError(key: unknown): string {
  const result = parseSessionKey(key);
  if (result.ok) throw new Error(`expected ${String(key)} to be refused`);
  expect(isColloquyError(result.error)).toBe(true);
  expect(result.error.code).toBe('INVALID_ARGUMENT');
  return result.error.message;
}

describe('parseSessionKey', () => {
  it('reads the bare aliases, case-insensitively', () => {
    expect(parsed('main')).toEqual({ type: 'alias', alias: 'main' });
    expect(parsed(' GLOBAL ')).toEqual({ type: 'alias', alias: 'global' });
    expect(parsed('Unknown')).toEqual({ type: 'alias', alias: 'unknown' });
  });

  it('reads an agent main key', () => {
    expect(parsed('agent:main:main')).toEqual({ type: 'main', agentId: 'main', mainKey: 'main' });
  });

  it('reads the three direct-chat forms', () => {
    expect(parsed('agent:main:telegram:dm:42')).toEqual({
      type: 'dm',
      agentId: 'main',
      channel: 'telegram',
      peerId: '42',
    });
    expect(parsed('agent:main:dm:42')).toEqual({ type: 'dm', agentId: 'main', peerId: '42' });
    expect(parsed('agent:main:telegram:bot2:dm:42')).toEqual({
      type: 'dm',
      agentId: 'main',
      channel: 'telegram',
      accountId: 'bot2',
      peerId: '42',
    });
  });

  it('reads groups, channels and their threads and topics', () => {
    expect(parsed('agent:main:discord:channel:123:thread:456')).toEqual({
      type: 'group',
      agentId: 'main',
      channel: 'discord',
      chatType: 'channel',
      chatId: '123',
      thread: { kind: 'thread', id: '456' },
    });
    expect(parsed('agent:main:telegram:group:-100123:topic:7')).toEqual({
      type: 'group',
      agentId: 'main',
      channel: 'telegram',
      chatType: 'group',
      chatId: '-100123',
      thread: { kind: 'topic', id: '7' },
    });
  });

  it('reads sub-agent, cron, hook and node keys', () => {
    expect(parsed('agent:research:subagent:0F0E')).toEqual({
      type: 'subagent',
      agentId: 'research',
      subagentId: '0f0e',
    });
    expect(parsed('cron:nightly-Report')).toEqual({ type: 'cron', jobId: 'nightly-Report' });
    expect(parsed('agent:main:cron:daily')).toEqual({ type: 'cron', agentId: 'main', jobId: 'daily' });
    expect(parsed('hook:AbC')).toEqual({ type: 'hook', hookId: 'AbC' });
    expect(parsed('node-Kitchen')).toEqual({ type: 'node', nodeId: 'Kitchen' });
  });

  it('lower-cases fixed words and agent ids but keeps the case of platform ids', () => {
    expect(parsed(' AGENT : Main : Telegram : DM : PeerX ')).toEqual({
      type: 'dm',
      agentId: 'main',
      channel: 'telegram',
      peerId: 'PeerX',
    });
    expect(parsed('Agent:MAIN:WhatsApp:Acct:DM:AbC@s.whatsapp.net:Thread:T1')).toMatchObject({
      accountId: 'Acct',
      peerId: 'AbC@s.whatsapp.net',
      thread: { kind: 'thread', id: 'T1' },
    });
  });

  it('treats an unrecognised key as opaque past its agent head, keeping its case (spec section 11)', () => {
    expect(normalizeSessionKey(' Agent:MAIN:Custom:ThingY:ABC ')).toBe('agent:main:Custom:ThingY:ABC');
    expect(normalizeSessionKey('agent:main:Custom:ThingY:ABC')).not.toBe(
      normalizeSessionKey('agent:main:custom:thingy:abc'),
    );
    expect(classifySessionKey('agent:main:Custom:ThingY:ABC', { mainKey: 'main' })).toBe('other');
  });

  it('keeps unrecognised but well-formed keys as other', () => {
    expect(parsed('my-custom-key')).toEqual({ type: 'other', key: 'my-custom-key' });
    expect(parsed('AGENT:Main:telegram:weird')).toEqual({
      type: 'other',
      agentId: 'main',
      key: 'agent:main:telegram:weird',
    });
    expect(parsed('CRON:job:run:1')).toEqual({ type: 'other', key: 'cron:job:run:1' });
  });

  it('decodes percent-encoded colons inside ids', () => {
    expect(parsed('agent:main:whatsapp:dm:123%3A12@s.whatsapp.net')).toMatchObject({
      peerId: '123:12@s.whatsapp.net',
    });
  });

  it('refuses what is not a key, with a sentence saying what to pass', () => {
    expect(parseError(42)).toMatch(/must be a string/);
    expect(parseError(undefined)).toMatch(/must be a string/);
    expect(parseError('   ')).toMatch(/empty/);
    expect(parseError('agent::main')).toMatch(/empty part/);
    expect(parseError('agent:main:')).toMatch(/empty part/);
    expect(parseError('agent:main')).toMatch(/agent:<agentId>:<session>/);
    expect(parseError('agent:main:x\ny')).toMatch(/control characters/);
    expect(parseError(`x${'y'.repeat(MAX_SESSION_KEY_LENGTH)}`)).toMatch(/longer than/);
  });
});

describe('formatSessionKey', () => {
  it('encodes colons and percent signs in ids so they survive a round trip', () => {
    const key: ParsedSessionKey = {
      type: 'dm',
      agentId: 'main',
      channel: 'matrix',
      peerId: '@alice:example.org%',
    };
    const text = formatSessionKey(key);
    expect(text).toBe('agent:main:matrix:dm:@alice%3Aexample.org%25');
    expect(parsed(text)).toEqual(key);
  });

  it('refuses empty ids', () => {
    expect(() => formatSessionKey({ type: 'dm', agentId: 'main', peerId: '  ' })).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    );
  });

  it('refuses an accountId without a channel', () => {
    expect(() => formatSessionKey({ type: 'dm', agentId: 'a', accountId: 'x', peerId: 'p' })).toThrow(
      /channel/,
    );
  });
});

describe('normalizeSessionKey', () => {
  it('gives every spelling one form', () => {
    expect(normalizeSessionKey(' Agent:MAIN:Discord:Channel:123 ')).toBe('agent:main:discord:channel:123');
    expect(normalizeSessionKey('MAIN')).toBe('main');
    expect(normalizeSessionKey('agent:Main:Main')).toBe('agent:main:main');
    expect(normalizeSessionKey('agent:main:subagent:ABC-DEF')).toBe('agent:main:subagent:abc-def');
    expect(normalizeSessionKey('agent:main:whatsapp:dm:1%3a2')).toBe('agent:main:whatsapp:dm:1%3A2');
  });

  it('only trims keys that do not parse, and never throws', () => {
    expect(normalizeSessionKey('  agent::X  ')).toBe('agent::X');
    expect(normalizeSessionKey(undefined as unknown as string)).toBe('');
  });
});

// --- properties ---

const ID_CHARS = [...'abcXYZ019-_@.+/:% é😀\t'];
const platformId = fc
  .string({ unit: fc.constantFrom(...ID_CHARS), minLength: 1, maxLength: 10 })
  .filter((s) => s.trim() === s && s !== '');
const ourId = platformId.map((s) => s.toLowerCase()).filter((s) => s.trim() === s && s !== '');
const thread = fc.option(
  fc.record({ kind: fc.constantFrom('thread' as const, 'topic' as const), id: platformId }),
  { nil: undefined },
);
const strip = <T extends object>(value: T): T =>
  Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;

/** Normalised structured keys of every shape. */
const parsedKeyArb: fc.Arbitrary<ParsedSessionKey> = fc.oneof(
  fc.constantFrom('main' as const, 'global' as const, 'unknown' as const).map((alias) => ({
    type: 'alias' as const,
    alias,
  })),
  fc.record({ agentId: ourId, mainKey: ourId, thread }).map((r) => strip({ type: 'main' as const, ...r })),
  fc
    .record({
      agentId: ourId,
      peerId: platformId,
      thread,
      scope: fc.integer({ min: 0, max: 2 }),
      channel: ourId,
      accountId: platformId,
    })
    .map(({ scope, channel, accountId, ...r }) =>
      strip({
        type: 'dm' as const,
        ...r,
        channel: scope > 0 ? channel : undefined,
        accountId: scope > 1 ? accountId : undefined,
      }),
    ),
  fc
    .record({
      agentId: ourId,
      channel: ourId,
      chatType: fc.constantFrom('group' as const, 'channel' as const),
      chatId: platformId,
      thread,
    })
    .map((r) => strip({ type: 'group' as const, ...r })),
  fc.record({ agentId: ourId, subagentId: ourId }).map((r) => ({ type: 'subagent' as const, ...r })),
  fc
    .record({ agentId: fc.option(ourId, { nil: undefined }), jobId: platformId })
    .map((r) => strip({ type: 'cron' as const, ...r })),
  fc
    .record({ agentId: fc.option(ourId, { nil: undefined }), hookId: platformId })
    .map((r) => strip({ type: 'hook' as const, ...r })),
  fc.record({ nodeId: platformId }).map((r) => ({ type: 'node' as const, ...r })),
);

/** Indexes of the `:` parts of a formatted key whose case does not matter. */
function caseFreeParts(key: ParsedSessionKey): Set<number> {
  switch (key.type) {
    case 'alias':
      return new Set([0]);
    case 'main':
      return new Set([0, 1, 2, 3]);
    case 'dm': {
      const dmAt = 2 + (key.channel === undefined ? 0 : 1) + (key.accountId === undefined ? 0 : 1);
      return new Set([0, 1, dmAt, dmAt + 2, ...(key.channel === undefined ? [] : [2])]);
    }
    case 'group':
      return new Set([0, 1, 2, 3, 5]);
    case 'subagent':
      return new Set([0, 1, 2, 3]);
    case 'cron':
    case 'hook':
      return new Set(key.agentId === undefined ? [0] : [0, 1, 2]);
    case 'node':
    case 'other':
      return new Set();
  }
}

/** Another spelling of the same key: whitespace around parts, random case where case does not matter. */
function respell(key: ParsedSessionKey, flips: readonly boolean[], pads: readonly string[]): string {
  const free = caseFreeParts(key);
  const text = formatSessionKey(key);
  const prefix = key.type === 'node' ? 'NoDe-' : '';
  const body = key.type === 'node' ? text.slice(5) : text;
  const parts = body.split(':').map((part, i) => {
    const cased = free.has(i)
      ? [...part].map((c, j) => (flips[(i + j) % Math.max(flips.length, 1)] ? c.toUpperCase() : c)).join('')
      : part;
    const pad = pads[i % Math.max(pads.length, 1)] ?? '';
    return `${pad}${cased}${pad}`;
  });
  return prefix + parts.join(':');
}

describe('session key properties', () => {
  it('parse(format(key)) gives the key back', () => {
    fc.assert(
      fc.property(parsedKeyArb, (key) => {
        expect(parsed(formatSessionKey(key))).toEqual(key);
      }),
      { numRuns: 300 },
    );
  });

  it('every respelling parses to the same key and normalises to the same text', () => {
    fc.assert(
      fc.property(
        parsedKeyArb,
        fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }),
        fc.array(fc.constantFrom('', ' ', '  ', '\u00a0'), { minLength: 1, maxLength: 4 }),
        (key, flips, pads) => {
          const spelled = respell(key, flips, pads);
          expect(parsed(spelled)).toEqual(key);
          expect(normalizeSessionKey(spelled)).toBe(formatSessionKey(key));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('normalisation is idempotent on any string', () => {
    const anyKey = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.string({ unit: fc.constantFrom(...'agent:MAIN dm group:%3a x\t'), maxLength: 40 }),
      parsedKeyArb.map(formatSessionKey),
    );
    fc.assert(
      fc.property(anyKey, (raw) => {
        const once = normalizeSessionKey(raw);
        expect(normalizeSessionKey(once)).toBe(once);
      }),
      { numRuns: 400 },
    );
  });

  it('a key that parses keeps parsing after normalisation, to the same structure', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom(...'agent:MAIN dm Group:%3a x'), maxLength: 40 }),
        (raw) => {
          const first = parseSessionKey(raw);
          if (!first.ok) return;
          expect(parsed(normalizeSessionKey(raw))).toEqual(first.key);
        },
      ),
      { numRuns: 400 },
    );
  });
});
