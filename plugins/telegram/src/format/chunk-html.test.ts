import { checkTelegramHtml } from '@colloquy/testkit/telegram-fake';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { chunkTelegramHtml, TELEGRAM_TEXT_LIMIT } from './chunk-html.js';
import { markdownToTelegramHtml } from './markdown-to-html.js';

const visible = (html: string): string => {
  const checked = checkTelegramHtml(html);
  if (!checked.ok) throw new Error(`${checked.error}\n${html}`);
  return checked.text;
};
const squash = (s: string): string => s.replace(/\s+/g, '');

describe('chunkTelegramHtml', () => {
  it('returns short HTML as one chunk', () => {
    expect(chunkTelegramHtml('<b>hi</b>')).toEqual(['<b>hi</b>']);
  });

  it('returns nothing for HTML without visible text', () => {
    expect(chunkTelegramHtml('  \n ')).toEqual([]);
    expect(chunkTelegramHtml('<b></b>')).toEqual([]);
  });

  it('prefers paragraph breaks, then line breaks', () => {
    const para = `${'a'.repeat(30)}\n\n${'b'.repeat(30)}`;
    expect(chunkTelegramHtml(para, 40)).toEqual(
      ['a'.repeat(30), 'b'.repeat(30)].map((s, i) => (i === 0 ? `${s}\n\n` : s)),
    );
    const lines = `${'a'.repeat(15)}\n${'b'.repeat(15)}\n${'c'.repeat(15)}`;
    const chunks = chunkTelegramHtml(lines, 40);
    expect(chunks.map((c) => c.trim())).toEqual([`${'a'.repeat(15)}\n${'b'.repeat(15)}`, 'c'.repeat(15)]);
  });

  it('closes and reopens tags across a cut', () => {
    const chunks = chunkTelegramHtml(`<b>${'word '.repeat(20)}</b>`, 40);
    expect(chunks.length).toBeGreaterThan(2);
    for (const chunk of chunks) {
      expect(chunk.startsWith('<b>')).toBe(true);
      expect(chunk.endsWith('</b>')).toBe(true);
      expect(chunk.length).toBeLessThanOrEqual(40);
    }
  });

  it('splits a long code block into several pre blocks at line breaks', () => {
    const code = Array.from({ length: 40 }, (_, i) => `line ${i}`).join('\n');
    const html = `<pre><code class="language-ts">${code}</code></pre>`;
    const chunks = chunkTelegramHtml(html, 120);
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) {
      expect(chunk).toMatch(/^<pre><code class="language-ts">[\s\S]*<\/code><\/pre>$/);
      expect(chunk).not.toMatch(/line \d+line/);
    }
    expect(chunks.map((c) => visible(c).trim()).join('\n')).toBe(code);
  });

  it('never cuts inside an entity or a surrogate pair', () => {
    const html = '&amp;😀'.repeat(50);
    for (const chunk of chunkTelegramHtml(html, 17)) {
      expect(chunk.length).toBeLessThanOrEqual(17);
      expect(visible(chunk)).toMatch(/^(&😀)*&?$|^(😀&)*😀?$/);
    }
  });

  it('cuts text without any break opportunity at the limit', () => {
    const chunks = chunkTelegramHtml('x'.repeat(100), 30);
    expect(chunks).toEqual(['x'.repeat(30), 'x'.repeat(30), 'x'.repeat(30), 'x'.repeat(10)]);
  });

  it('splits a 10,000-character reply into valid 4096-character messages', () => {
    const paragraph = `**Point** with \`code\` & <escapes> and a [link](https://example.com/?a=1&b=2). ${'lorem ipsum '.repeat(20)}`;
    const markdown = Array.from({ length: 40 }, () => paragraph).join('\n\n');
    expect(markdown.length).toBeGreaterThan(10_000);
    const html = markdownToTelegramHtml(markdown);
    const chunks = chunkTelegramHtml(html);
    expect(chunks.length).toBeGreaterThanOrEqual(3);
    for (const chunk of chunks) expect(chunk.length).toBeLessThanOrEqual(TELEGRAM_TEXT_LIMIT);
    expect(squash(chunks.map(visible).join(''))).toBe(squash(visible(html)));
  });

  it('keeps every chunk within the limit, well-formed and the text intact (property)', () => {
    const pieces = fc.constantFrom(
      '**bold** ',
      '*it* ',
      '~~s~~ ',
      '`c<d>` ',
      '```py\nx = 1 < 2\ny = "&"\n```\n',
      '[l](https://x.y/?a=1&b=2) ',
      '> quote *a*\n',
      '- item\n',
      '\n',
      '\n\n',
      'plain words here ',
      'averyveryveryverylongwordwithoutanybreaks',
      '&<>',
      '😀',
    );
    fc.assert(
      fc.property(
        fc.array(pieces, { maxLength: 120 }),
        fc.integer({ min: 120, max: 600 }),
        (parts, limit) => {
          const html = markdownToTelegramHtml(parts.join(''));
          const chunks = chunkTelegramHtml(html, limit);
          for (const chunk of chunks) {
            expect(chunk.length).toBeLessThanOrEqual(limit);
            expect(checkTelegramHtml(chunk)).toMatchObject({ ok: true });
          }
          expect(squash(chunks.map(visible).join(''))).toBe(squash(visible(html)));
        },
      ),
      { numRuns: 300 },
    );
  });
});
