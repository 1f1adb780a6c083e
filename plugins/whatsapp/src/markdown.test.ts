import { describe, expect, it } from 'vitest';
import { markdownToWhatsApp } from './markdown.js';

describe('markdownToWhatsApp', () => {
  it.each([
    ['**bold**', '*bold*'],
    ['__bold__', '*bold*'],
    ['*italic*', '_italic_'],
    ['_italic_', '_italic_'],
    ['***both***', '*_both_*'],
    ['~~gone~~', '~gone~'],
    ['a *b **c** d* e', 'a _b *c* d_ e'],
    ['`x = 1`', '`x = 1`'],
    ['# Title', '*Title*'],
    ['### **Loud** title ###', '*Loud title*'],
    ['[docs](https://example.com/a)', 'docs (https://example.com/a)'],
    ['[https://x.dev](https://x.dev)', 'https://x.dev'],
    ['![chart](https://x.dev/c.png)', 'chart (https://x.dev/c.png)'],
    ['<https://x.dev>', 'https://x.dev'],
    ['* one\n+ two\n  - three', '- one\n- two\n  - three'],
    ['---', '───'],
    ['2 * 3 * 4 = 24', '2 * 3 * 4 = 24'],
    ['snake_case_name stays', 'snake_case_name stays'],
    ['a \\*literal\\* star', 'a *literal* star'],
    ['> quoted **line**', '> quoted *line*'],
  ])('converts %j to %j', (input, expected) => {
    expect(markdownToWhatsApp(input)).toBe(expected);
  });

  it('keeps fenced code verbatim as a monospace block without the language tag', () => {
    const input = 'Run:\n\n```ts\nconst a = **b** * c;\n# not a heading\n```\n\nthen **done**.';
    expect(markdownToWhatsApp(input)).toBe(
      'Run:\n\n```\nconst a = **b** * c;\n# not a heading\n```\n\nthen *done*.',
    );
  });

  it('does not format inside inline code', () => {
    expect(markdownToWhatsApp('use `**kwargs` and **this**')).toBe('use `**kwargs` and *this*');
  });

  it('closes an unterminated fence at the end of the text', () => {
    expect(markdownToWhatsApp('```\nhalf')).toBe('```\nhalf\n```');
  });

  it('normalises CRLF line endings', () => {
    expect(markdownToWhatsApp('**a**\r\n*b*')).toBe('*a*\n_b_');
  });
});
