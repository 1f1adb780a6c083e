import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { commonmark, discord, slackMrkdwn, telegramHtml, whatsapp } from './index.js';
import { checkMessages, MARKDOWN_BLOCKS, MARKDOWN_PIECES } from './testing/index.js';

const dialects = [telegramHtml, discord, whatsapp, slackMrkdwn, commonmark];

/** Markdown pieces, arbitrary strings, and long runs with few break opportunities. */
const piece = fc.oneof(
  fc.constantFrom(...MARKDOWN_BLOCKS, ...MARKDOWN_PIECES),
  fc.string({ maxLength: 30 }),
  fc.string({ minLength: 40, maxLength: 300, unit: fc.constantFrom('a', 'b', '1', ' ', '\n', '😀', '&') }),
);

describe('the dialects without escapes, read as the platform shows them', () => {
  it('keeps literal tildes and backticks that meet across a link or a strike from opening a code block', () => {
    // Found by the property below: a link's text `~~` (its URL dropped) next to a literal `~~` read `~~~~`.
    for (const text of [
      '[~~](javascript:x)~~',
      '~~[~~](https://x.y)',
      '\\~\\~~~x~~',
      '\\`\\``code` and ```',
    ]) {
      for (const dialect of [whatsapp, slackMrkdwn]) {
        expect(checkMessages(dialect, text, 100_000), `${dialect.name}: ${text}`).toEqual([]);
      }
    }
  });

  it('loses no text when a split parts brackets that CommonMark would read as a link', () => {
    // WhatsApp shows `[...](url)` as written; the whole rendering keeps the second URL visible too.
    const text = '[[**bold link**](https://example.com/a/b?c=d) ](https://x.y/?a=1&b=2)';
    expect(checkMessages(whatsapp, text, 64)).toEqual([]);
  });
});

describe.each(dialects)('the $name dialect', (dialect) => {
  it('renders any markdown into one well-formed message when it fits (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...MARKDOWN_PIECES), { maxLength: 60 }), (parts) => {
        expect(checkMessages(dialect, parts.join(''), 100_000)).toEqual([]);
      }),
      { numRuns: 400 },
    );
  });

  it('keeps every message within the limit, well-formed, with no text lost (property)', () => {
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 150 }), fc.integer({ min: 64, max: 600 }), (parts, limit) => {
        expect(checkMessages(dialect, parts.join(''), limit)).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it('splits plain text the same way (property)', () => {
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 150 }), fc.integer({ min: 64, max: 600 }), (parts, limit) => {
        expect(checkMessages(dialect, parts.join(''), limit, 'plain')).toEqual([]);
      }),
      { numRuns: 200 },
    );
  });
});
