import { describe, expect, it } from 'vitest';
import { createRedactor } from '../history/index.js';
import type { TranscriptMessage } from '../interfaces/records.js';
import { SEARCH_INDEX_MAX_CHARS } from '../store/search-text.js';
import { SEARCH_SNIPPET_CHARS, searchSnippet } from './search-snippet.js';

const redactor = createRedactor(['hunter2-secret']);
const say = (text: string): TranscriptMessage => ({ role: 'user', content: text, timestamp: 1 });

describe('searchSnippet', () => {
  it('shows the text around the first matching word, cut with ellipses', () => {
    const text = `${'early words '.repeat(40)}the harbour crane ${'late words '.repeat(40)}`;
    const { snippet } = searchSnippet(say(text), ['crane'], redactor);
    expect(snippet.startsWith('…')).toBe(true);
    expect(snippet.endsWith('…')).toBe(true);
    expect(snippet).toContain('harbour crane');
    expect(snippet.length).toBeLessThanOrEqual(SEARCH_SNIPPET_CHARS + 2);
  });

  it('redacts configured secrets and known key shapes before cutting', () => {
    const { snippet, redacted } = searchSnippet(
      say('deploy with hunter2-secret and sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789 now'),
      ['deploy'],
      redactor,
    );
    expect(redacted).toBe(true);
    expect(snippet).not.toContain('hunter2-secret');
    expect(snippet).not.toContain('abcdefghijklmnop');
  });

  it.each([
    ['a key of a built-in pattern', 'sk-proj-4f9A8b7C6d5E4f3G2h1I0jKlMnOpQrStUv', '4f9A8'],
    ['a configured secret', 'hunter2-secret', 'hunt'],
  ])('redacts %s that crosses the indexed length before cutting there', (_name, secret, part) => {
    // The secret starts 13 characters before the cut; the matching word comes just before it.
    const lead = `${'a'.repeat(SEARCH_INDEX_MAX_CHARS - 20)} `;
    const message: TranscriptMessage = {
      role: 'assistant',
      content: [{ type: 'text', text: `${lead}crane ${secret} tail` }],
      timestamp: 1,
    };
    const { snippet, redacted } = searchSnippet(message, ['crane'], redactor);
    expect(snippet).toContain('crane [REDACTED]');
    expect(snippet).not.toContain(part);
    expect(redacted).toBe(true);
  });

  it('shows only text blocks, never tool results', () => {
    const message: TranscriptMessage = {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'private crane thoughts' },
        { type: 'text', text: 'the crane' },
      ],
      timestamp: 1,
    };
    expect(searchSnippet(message, ['crane'], redactor).snippet).toBe('the crane');
    const result: TranscriptMessage = { role: 'toolResult', content: 'crane', toolCallId: 'c', timestamp: 1 };
    expect(searchSnippet(result, ['crane'], redactor).snippet).toBe('');
  });

  it('never splits a surrogate pair and folds whitespace', () => {
    const text = `${'😀'.repeat(300)}\n\n  crane`;
    const { snippet } = searchSnippet(say(text), ['crane'], redactor);
    expect(snippet).toMatch(/crane$/);
    expect(snippet.includes('\n')).toBe(false);
    expect(/^…?(?:\uD83D\uDE00)+ crane$/u.test(snippet.replace(/^…/, ''))).toBe(true);
  });

  it('shows the start of the text when no word is found', () => {
    expect(searchSnippet(say('short text'), ['absent'], redactor).snippet).toBe('short text');
  });
});
