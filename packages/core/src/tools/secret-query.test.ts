import { describe, expect, it } from 'vitest';
import { queryTouchesSecret } from './secret-query.js';

const SECRETS = ['Zq-Pin-8841', 'correct horse'];

describe('queryTouchesSecret', () => {
  it.each([
    ['the whole secret, any case', 'my pin is zq-pin-8841'],
    ['one word of it', '8841'],
    ['a word of a secret with spaces', 'HORSE'],
    ['the secret inside a longer word', 'xZq-Pin-8841x'],
  ])('is true for %s', (_name, query) => {
    expect(queryTouchesSecret(query, SECRETS)).toBe(true);
  });

  it('is false for other words, and without configured secrets', () => {
    expect(queryTouchesSecret('bank code 884', SECRETS)).toBe(false);
    expect(queryTouchesSecret('8841', [])).toBe(false);
    expect(queryTouchesSecret('8841', [''])).toBe(false);
  });
});
