import { describe, expect, it } from 'vitest';
import type { TranscriptMessage } from '../interfaces/records.js';
import {
  SEARCH_INDEX_MAX_CHARS,
  SEARCH_MAX_TERMS,
  SEARCH_MAX_WORD_CHARS,
  scoreSearchWords,
  searchableText,
  searchTerms,
  searchWords,
} from './search-text.js';

// A fake credential, assembled at run time so no scanner mistakes this file for a leak.
const API_KEY = ['sk-proj-', '4f9A8b7C6d5E4f3G2h1I0', 'jKlMnOpQrStUv'].join('');
const say = (text: string): TranscriptMessage => ({ role: 'user', content: text, timestamp: 1 });

describe('searchWords', () => {
  it.each([
    ['see example.com/a?b=1', ['see', 'example', 'com', 'a', 'b', '1']],
    ['bob@corp.io', ['bob', 'corp', 'io']],
    ['v1.2.3 and 3.14159', ['v1', '2', '3', 'and', '3', '14159']],
    [
      'rocket🚀launch zero\u200bwidth non\u00a0breaking',
      ['rocket', 'launch', 'zero', 'width', 'non', 'breaking'],
    ],
    ['Москве ÉCOLE Über', ['москве', 'école', 'über']],
    ['cafe\u0301 café', ['café', 'café']],
    ['नमस्ते', ['नमस्ते']],
    ["don't stop_here", ['don', 't', 'stop', 'here']],
  ])('splits %j into letters, digits and marks, lower-cased', (text, words) => {
    expect(searchWords(text)).toEqual(words);
  });

  it('cuts a long word to SEARCH_MAX_WORD_CHARS, never inside a surrogate pair', () => {
    expect(searchWords(`${'a'.repeat(3000)} b`)).toEqual(['a'.repeat(SEARCH_MAX_WORD_CHARS), 'b']);
    const wide = `x${'𝒳'.repeat(SEARCH_MAX_WORD_CHARS)}`;
    const [word] = searchWords(wide);
    expect(word!.length).toBe(SEARCH_MAX_WORD_CHARS - 1);
    expect(word!.endsWith('𝒳')).toBe(true);
  });
});

describe('searchTerms', () => {
  it('splits a query as indexed text is split, without repeats and at most SEARCH_MAX_TERMS words', () => {
    expect(searchTerms('Crane AND "crane*" NEAR(port)')).toEqual(['crane', 'and', 'near', 'port']);
    const many = Array.from({ length: 30 }, (_, i) => `w${i}`).join(' ');
    expect(searchTerms(many)).toHaveLength(SEARCH_MAX_TERMS);
  });

  it('keeps a long query word, cut like an indexed one', () => {
    expect(searchTerms(`kiwi ${'a'.repeat(3000)}`)).toEqual(['kiwi', 'a'.repeat(SEARCH_MAX_WORD_CHARS)]);
  });
});

describe('searchableText', () => {
  it('indexes string content and text blocks, never tool results or thinking', () => {
    expect(searchableText(say('plain'))).toBe('plain');
    const blocks: TranscriptMessage = {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'hidden' },
        { type: 'text', text: 'one' },
        { type: 'text', text: 'two' },
      ],
      timestamp: 1,
    };
    expect(searchableText(blocks)).toBe('one two');
    expect(
      searchableText({ role: 'toolResult', content: 'out', toolCallId: 'c', timestamp: 1 }),
    ).toBeUndefined();
  });

  it('redacts built-in secret patterns from the whole text before cutting it', () => {
    expect(searchableText(say(`key ${API_KEY} and postgres://app:pw12345@db/x`))).toBe(
      'key [REDACTED] and postgres://app:***@db/x',
    );
    const crossing = `${'a'.repeat(SEARCH_INDEX_MAX_CHARS - 20)} crane ${API_KEY} tail`;
    const text = searchableText(say(crossing))!;
    expect(text.length).toBe(SEARCH_INDEX_MAX_CHARS);
    expect(text.endsWith(' crane [REDACTED] ta')).toBe(true);
  });
});

describe('scoreSearchWords', () => {
  it('is 0 unless every term occurs, and higher for more occurrences in fewer words', () => {
    expect(scoreSearchWords(['a', 'b'], ['a', 'c'])).toBe(0);
    const dense = scoreSearchWords(['a', 'b', 'a'], ['a', 'b']);
    const sparse = scoreSearchWords(['a', 'b', 'x', 'y', 'z', 'w'], ['a', 'b']);
    expect(dense).toBeGreaterThan(sparse);
  });
});
