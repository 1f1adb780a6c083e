import { describe, expect, it } from 'vitest';
import { createRedactor } from '../history/index.js';
import { SEARCH_SNIPPET_CHARS, searchSnippet } from './search-snippet.js';

const redactor = createRedactor(['hunter2-secret']);

describe('searchSnippet', () => {
  it('shows the text around the first matching word, cut with ellipses', () => {
    const text = `${'early words '.repeat(40)}the harbour crane ${'late words '.repeat(40)}`;
    const { snippet } = searchSnippet(text, ['crane'], redactor);
    expect(snippet.startsWith('…')).toBe(true);
    expect(snippet.endsWith('…')).toBe(true);
    expect(snippet).toContain('harbour crane');
    expect(snippet.length).toBeLessThanOrEqual(SEARCH_SNIPPET_CHARS + 2);
  });

  it('redacts configured secrets and known key shapes before cutting', () => {
    const { snippet, redacted } = searchSnippet(
      'deploy with hunter2-secret and sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789 now',
      ['deploy'],
      redactor,
    );
    expect(redacted).toBe(true);
    expect(snippet).not.toContain('hunter2-secret');
    expect(snippet).not.toContain('abcdefghijklmnop');
  });

  it('never splits a surrogate pair and folds whitespace', () => {
    const text = `${'😀'.repeat(300)}\n\n  crane`;
    const { snippet } = searchSnippet(text, ['crane'], redactor);
    expect(snippet).toMatch(/crane$/);
    expect(snippet.includes('\n')).toBe(false);
    expect(/^…?(?:\uD83D\uDE00)+ crane$/u.test(snippet.replace(/^…/, ''))).toBe(true);
  });

  it('shows the start of the text when no word is found', () => {
    expect(searchSnippet('short text', ['absent'], redactor).snippet).toBe('short text');
  });
});
