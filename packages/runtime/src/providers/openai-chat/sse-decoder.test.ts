import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SseDecoder } from './sse-decoder.js';

const decodeAll = (pieces: readonly string[]): string[] => {
  const decoder = new SseDecoder();
  return [...pieces.flatMap((piece) => decoder.push(piece)), ...decoder.end()];
};

describe('SseDecoder', () => {
  it('returns the data of each event and skips comments and other fields', () => {
    expect(decodeAll([': keep-alive\n\nevent: x\nid: 1\ndata: {"a":1}\n\ndata: [DONE]\n\n'])).toEqual([
      '{"a":1}',
      '[DONE]',
    ]);
  });

  it('joins the data lines of one event and keeps data without the optional space', () => {
    expect(decodeAll(['data: one\ndata:two\n\n'])).toEqual(['one\ntwo']);
  });

  it('accepts CRLF and CR line ends, also when a CRLF is split between pieces', () => {
    expect(decodeAll(['data: a\r', '\n\r', '\ndata: b\r\rdata: c\n\n'])).toEqual(['a', 'b', 'c']);
  });

  it('keeps an event the end of the body cut off', () => {
    expect(decodeAll(['data: last'])).toEqual(['last']);
  });

  it('gives the same events however the body is split', () => {
    const event = fc.stringMatching(/^[^\r\n]{0,20}$/);
    const ending = fc.constantFrom('\n', '\r\n', '\r');
    fc.assert(
      fc.property(
        fc.array(event, { maxLength: 8 }),
        ending,
        fc.array(fc.nat(), { maxLength: 6 }),
        (events, eol, cuts) => {
          const body = events.map((data) => `data: ${data}${eol}${eol}`).join('');
          const points = [...new Set(cuts.map((cut) => cut % (body.length + 1)))].sort((a, b) => a - b);
          const bounds = [0, ...points, body.length];
          const pieces = bounds.slice(1).map((end, i) => body.slice(bounds[i], end));
          expect(decodeAll(pieces)).toEqual(events);
        },
      ),
    );
  });
});
