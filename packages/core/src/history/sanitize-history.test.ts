import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { StoredMessage, TranscriptMessage } from '../interfaces/records.js';
import { REDACTION_MARK } from './redact-secrets.js';
import {
  HISTORY_MAX_BYTES,
  HISTORY_OMITTED_PLACEHOLDER,
  HISTORY_TEXT_LIMIT,
  type SanitizedMessage,
  sanitizeHistory,
} from './sanitize-history.js';
import { TRUNCATION_SUFFIX, utf8ByteLength } from './truncate-text.js';

const user = (content: TranscriptMessage['content'], timestamp = 1): TranscriptMessage => ({
  role: 'user',
  content,
  timestamp,
});
const bytesOf = (messages: readonly SanitizedMessage[]) =>
  Buffer.byteLength(JSON.stringify(messages), 'utf8');
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

function allStrings(value: unknown, into: string[] = []): string[] {
  if (typeof value === 'string') into.push(value);
  else if (typeof value === 'object' && value !== null)
    for (const inner of Object.values(value)) allStrings(inner, into);
  return into;
}

describe('sanitizeHistory: what is kept', () => {
  it('drops toolResult messages unless includeTools', () => {
    const messages: TranscriptMessage[] = [
      user('q'),
      { role: 'toolResult', content: 'tool output', timestamp: 2, toolCallId: 't1', toolName: 'x' },
      { role: 'assistant', content: 'a', timestamp: 3 },
    ];
    expect(sanitizeHistory(messages).messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(sanitizeHistory(messages, { includeTools: true }).messages.map((m) => m.role)).toEqual([
      'user',
      'toolResult',
      'assistant',
    ]);
  });

  it('removes details, usage and cost and keeps the other fields', () => {
    const stored: StoredMessage = {
      seq: 7,
      role: 'assistant',
      content: 'hi',
      timestamp: 5,
      runId: 'r1',
      provenance: { kind: 'inter_session', sourceSessionKey: 'agent:main:main', hop: 1 },
      usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 },
      cost: 0.01,
      details: { raw: 'x' },
    };
    expect(sanitizeHistory([stored]).messages).toEqual([
      {
        seq: 7,
        role: 'assistant',
        content: 'hi',
        timestamp: 5,
        runId: 'r1',
        provenance: { kind: 'inter_session', sourceSessionKey: 'agent:main:main', hop: 1 },
      },
    ]);
  });

  it('removes thinking signatures and image data, recording the size of the data', () => {
    const [message] = sanitizeHistory([
      user([
        { type: 'thinking', thinking: 'hmm', thinkingSignature: 'sig' },
        { type: 'image', mimeType: 'image/png', data: 'iVBORw0KGgo=' },
        { type: 'text', text: 'look' },
      ]),
    ]).messages;
    expect(message?.content).toEqual([
      { type: 'thinking', thinking: 'hmm' },
      { type: 'image', mimeType: 'image/png', omitted: true, bytes: 12 },
      { type: 'text', text: 'look' },
    ]);
  });

  it('keeps the recorded size of an image whose data was already removed', () => {
    const [message] = sanitizeHistory([
      user([{ type: 'image', mimeType: 'image/jpeg', omitted: true, bytes: 99 }]),
    ]).messages;
    expect(message?.content).toEqual([{ type: 'image', mimeType: 'image/jpeg', omitted: true, bytes: 99 }]);
  });

  it('returns an empty list as two bytes of JSON', () => {
    expect(sanitizeHistory([])).toEqual({
      messages: [],
      truncated: false,
      redacted: false,
      hardCapped: false,
      totalBytes: 2,
    });
  });
});

describe('sanitizeHistory: redaction and truncation', () => {
  const secret = 'zq-Secret-Value-991';

  it('redacts every text field and says so', () => {
    const result = sanitizeHistory(
      [
        user(`my key is ${secret}`),
        {
          role: 'assistant',
          timestamp: 2,
          content: [
            { type: 'text', text: `echo ${secret}` },
            { type: 'thinking', thinking: `remember ${secret}` },
            {
              type: 'toolCall',
              id: 'c',
              name: 'http',
              arguments: { headers: { auth: secret }, list: [secret] },
              partialJson: `{"a":"${secret}"}`,
            },
          ],
        },
        { ...user('photo', 3), media: [{ kind: 'image', caption: `caption ${secret}` }] },
      ],
      { secrets: [secret] },
    );
    expect(result.redacted).toBe(true);
    expect(JSON.stringify(result.messages)).not.toContain(secret);
    expect(JSON.stringify(result.messages)).toContain(REDACTION_MARK);
  });

  it('reports nothing redacted when nothing was', () => {
    expect(sanitizeHistory([user('hello')], { secrets: [secret] }).redacted).toBe(false);
  });

  it('cuts long text to 4000 units followed by exactly the truncation mark', () => {
    const result = sanitizeHistory([user('x'.repeat(5000))]);
    expect(result.truncated).toBe(true);
    expect(result.messages[0]?.content).toBe(`${'x'.repeat(HISTORY_TEXT_LIMIT)}\n…(truncated)…`);
  });

  it('leaves text of exactly 4000 units alone', () => {
    const result = sanitizeHistory([user('y'.repeat(HISTORY_TEXT_LIMIT))]);
    expect(result.truncated).toBe(false);
    expect(result.messages[0]?.content).toBe('y'.repeat(HISTORY_TEXT_LIMIT));
  });

  it('never splits a surrogate pair at the cut', () => {
    const text = `${'a'.repeat(HISTORY_TEXT_LIMIT - 1)}😀tail`;
    const content = sanitizeHistory([user(text)]).messages[0]?.content as string;
    expect(content).toBe(`${'a'.repeat(HISTORY_TEXT_LIMIT - 1)}${TRUNCATION_SUFFIX}`);
  });

  it('redacts before cutting, so a secret across the cut leaves no piece behind', () => {
    const text = `${'a'.repeat(HISTORY_TEXT_LIMIT - 5)}${secret}${'b'.repeat(100)}`;
    const content = sanitizeHistory([user(text)], { secrets: [secret] }).messages[0]?.content as string;
    expect(content).not.toContain(secret.slice(0, 5));
  });
});

describe('sanitizeHistory: never touches its input', () => {
  it('works on frozen input and returns objects not shared with it', () => {
    const input = deepFreeze([
      {
        ...user([{ type: 'image', mimeType: 'image/png', data: 'AAAA' }]),
        sender: { id: 'u1', name: 'Ann' },
        usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
      },
      {
        role: 'assistant',
        content: [{ type: 'toolCall', id: 'c', name: 'n', arguments: { deep: { x: 1 } } }],
        timestamp: 2,
      },
    ] satisfies TranscriptMessage[]);
    const snapshot = structuredClone(input);
    const result = sanitizeHistory(input);
    expect(input).toEqual(snapshot);
    const [first, second] = result.messages;
    if (first?.sender) first.sender.name = 'changed';
    const blocks = second?.content as { arguments: { deep: { x: number } } }[] | undefined;
    const call = blocks?.[0];
    expect(call).toBeDefined();
    if (call) call.arguments.deep.x = 2;
    expect(input).toEqual(snapshot);
  });
});

describe('sanitizeHistory: the 80 KiB hard cap', () => {
  // Each message: 4000 two-byte characters, about 8 KB of JSON.
  const big = (i: number) => user('é'.repeat(HISTORY_TEXT_LIMIT), i);

  it('keeps the newest messages that fit and reports the exact size', () => {
    const input = Array.from({ length: 30 }, (_, i) => big(i));
    const result = sanitizeHistory(input);
    expect(result.hardCapped).toBe(true);
    expect(result.totalBytes).toBe(bytesOf(result.messages));
    expect(result.totalBytes).toBeLessThanOrEqual(HISTORY_MAX_BYTES);
    const kept = result.messages.map((m) => m.timestamp);
    expect(kept).toEqual(Array.from({ length: kept.length }, (_, i) => 30 - kept.length + i));
    expect(Buffer.byteLength(JSON.stringify([input[29 - kept.length], ...result.messages]))).toBeGreaterThan(
      HISTORY_MAX_BYTES,
    );
  });

  it('is not capped when everything fits', () => {
    const result = sanitizeHistory([big(1), big(2)]);
    expect(result.hardCapped).toBe(false);
    expect(result.messages).toHaveLength(2);
    expect(result.totalBytes).toBe(bytesOf(result.messages));
  });

  it('returns exactly the placeholder when not even the newest message fits', () => {
    const huge = user(
      Array.from({ length: 30 }, () => ({ type: 'text' as const, text: 'z'.repeat(HISTORY_TEXT_LIMIT) })),
      9,
    );
    const result = sanitizeHistory([user('small', 1), huge]);
    expect(result.messages).toEqual([
      { role: 'assistant', content: '[sessions_history omitted: message too large]' },
    ]);
    expect(result.messages[0]).toEqual(HISTORY_OMITTED_PLACEHOLDER);
    expect(result.hardCapped).toBe(true);
    expect(result.totalBytes).toBe(bytesOf(result.messages));
  });
});

// --- properties ---

describe('sanitizeHistory properties', () => {
  const fragment = fc.oneof(
    fc.string({ maxLength: 20 }),
    fc
      .tuple(fc.constantFrom('a', 'é', '語', '😀', ' ', '"', '\\', '\n'), fc.integer({ min: 0, max: 4500 }))
      .map(([c, n]) => c.repeat(n)),
  );
  const textArb = fc.array(fragment, { maxLength: 4 }).map((parts) => parts.join(''));
  const messageArb = fc
    .record({
      role: fc.constantFrom('user' as const, 'assistant' as const, 'toolResult' as const),
      blocks: fc.option(fc.array(textArb, { maxLength: 6 }), { nil: undefined }),
      text: textArb,
    })
    .map(
      ({ role, blocks, text }): TranscriptMessage => ({
        role,
        timestamp: 0,
        content: blocks ? blocks.map((b) => ({ type: 'text' as const, text: b })) : text,
      }),
    );
  const historyArb = fc
    .array(messageArb, { maxLength: 25 })
    .map((ms) => ms.map((m, i) => ({ ...m, timestamp: i })));

  it('never returns more than 80 KiB, reports the size exactly, and keeps a contiguous newest suffix', () => {
    fc.assert(
      fc.property(historyArb, fc.boolean(), (history, includeTools) => {
        const result = sanitizeHistory(history, { includeTools });
        const bytes = bytesOf(result.messages);
        expect(bytes).toBeLessThanOrEqual(HISTORY_MAX_BYTES);
        expect(result.totalBytes).toBe(bytes);
        const expected = history
          .filter((m) => includeTools || m.role !== 'toolResult')
          .map((m) => m.timestamp);
        const placeholder = result.messages.length === 1 && result.messages[0]?.timestamp === undefined;
        if (!placeholder) {
          const kept = result.messages.map((m) => m.timestamp);
          expect(kept).toEqual(expected.slice(expected.length - kept.length));
          expect(result.hardCapped).toBe(kept.length < expected.length);
        } else expect(result.hardCapped).toBe(true);
      }),
      { numRuns: 60 },
    );
  });

  it('lets no configured secret survive, wherever it sits', () => {
    const secretArb = fc
      .string({
        unit: fc.constantFrom(...'abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ0123456789-_'),
        minLength: 8,
        maxLength: 24,
      })
      .filter((s) => !REDACTION_MARK.includes(s));
    fc.assert(
      fc.property(
        fc.array(secretArb, { minLength: 1, maxLength: 4 }),
        fc.array(fc.tuple(fragment, fc.nat(3)), { minLength: 1, maxLength: 6 }),
        (secrets, pieces) => {
          const text = pieces.map(([f, i]) => f + (secrets[i % secrets.length] ?? '')).join('');
          const messages: TranscriptMessage[] = [
            user(text, 1),
            {
              role: 'assistant',
              timestamp: 2,
              content: [
                { type: 'text', text },
                { type: 'thinking', thinking: text },
              ],
            },
          ];
          const out = allStrings(sanitizeHistory(messages, { secrets }).messages);
          for (const s of secrets) for (const field of out) expect(field.includes(s)).toBe(false);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('never splits a surrogate pair', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: HISTORY_TEXT_LIMIT - 6, max: HISTORY_TEXT_LIMIT + 6 }),
        fc.array(fc.constantFrom('a', '😀', '𝄞', 'é'), { minLength: 1, maxLength: 8 }),
        (length, alphabet) => {
          let text = '';
          for (let i = 0; text.length < length; i++) text += alphabet[i % alphabet.length];
          const out = allStrings(sanitizeHistory([user(text)]).messages);
          for (const field of out) expect(LONE_SURROGATE.test(field)).toBe(false);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('measures sizes exactly like the UTF-8 encoder', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (s) => {
        expect(utf8ByteLength(s)).toBe(new TextEncoder().encode(s).length);
      }),
      { numRuns: 300 },
    );
  });
});

describe('sanitizeHistory: what it cannot read', () => {
  const at = 1_700_000_000_000;
  it('drops unreadable content blocks, counts them, and never throws', () => {
    const stored = [
      {
        role: 'assistant',
        timestamp: at,
        content: [
          null,
          { type: 'text', text: 'kept' },
          { text: 'no type' },
          { type: 'text', text: 42 },
          'a string',
        ],
      },
      { role: 'user', timestamp: at, content: null },
      { role: 'user', timestamp: at, content: 'fine', media: [null] },
    ] as unknown as TranscriptMessage[];
    const result = sanitizeHistory(stored);
    expect(result.messages.map((m) => m.content)).toEqual([[{ type: 'text', text: 'kept' }], '', 'fine']);
    expect(result.droppedBlocks).toBe(5);
  });

  it('says nothing about dropped blocks when there were none', () => {
    const result = sanitizeHistory([{ role: 'user', content: 'hello', timestamp: at }]);
    expect('droppedBlocks' in result).toBe(false);
  });

  it('returns an image block that carries only a url as it is, without omitted', () => {
    const image = { type: 'image', mimeType: 'image/png', url: 'https://example.com/cat.png' };
    const result = sanitizeHistory([
      { role: 'user', timestamp: at, content: [image] } as unknown as TranscriptMessage,
    ]);
    expect(result.messages[0]?.content).toEqual([image]);
  });
});
