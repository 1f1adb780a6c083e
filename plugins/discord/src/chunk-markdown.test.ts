import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { chunkDiscordMarkdown, splitLongLine } from './chunk-markdown.js';

/** An independent fence tracker: the fence marker left open at the end of `text`, if any. */
function openFenceAtEnd(text: string, startOpen?: string): string | undefined {
  let open = startOpen;
  for (const line of text.split('\n')) {
    const match = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(line);
    if (match === null) continue;
    const marker = match[1]!;
    const rest = match[2]!;
    if (open === undefined) {
      if (marker[0] === '`' && rest.includes('`')) continue;
      open = marker;
    } else if (rest.trim() === '' && marker[0] === open[0] && marker.length >= open.length) {
      open = undefined;
    }
  }
  return open;
}

const squash = (text: string): string => text.replace(/\s+/g, '');

/**
 * True when the chunks hold exactly the text, once whitespace and the fence lines the chunker
 * added at chunk boundaries (a closing marker, then a reopening line) are set aside.
 */
function preservesContent(text: string, chunks: string[]): boolean {
  const target = squash(text);
  const variants = chunks.map((chunk, i) => {
    const lines = chunk.split('\n');
    const options = [chunk];
    const reopen = i > 0 && /^(`{3,}|~{3,})\S*$/.test(lines[0]!);
    const close = i < chunks.length - 1 && /^(`{3,}|~{3,})$/.test(lines.at(-1)!);
    if (reopen) options.push(lines.slice(1).join('\n'));
    if (close) options.push(lines.slice(0, -1).join('\n'));
    if (reopen && close) options.push(lines.slice(1, -1).join('\n'));
    return options.map(squash);
  });
  const search = (i: number, at: number): boolean => {
    if (i === variants.length) return at === target.length;
    return variants[i]!.some((piece) => target.startsWith(piece, at) && search(i + 1, at + piece.length));
  };
  return search(0, 0);
}

const word = fc.oneof(
  fc.constantFrom('alpha', 'beta', 'gamma', 'déjà', 'naïve', '😀', '🧪🧪', 'x'),
  fc.string({ minLength: 1, maxLength: 12 }).filter((s) => !/[\n\r`~]/.test(s)),
  fc.constantFrom('`inline code`', '**bold text**', '*it*', '||spoiler||', '[link](https://example.com/a)'),
  fc.constantFrom('https://example.com/a/very/long/path?with=query&and=more', '<@123456789012345678>'),
  fc.string({ minLength: 40, maxLength: 300, unit: fc.constantFrom('a', 'b', 'c', '1') }),
);
const line = fc.array(word, { minLength: 0, maxLength: 30 }).map((words) => words.join(' '));
const fence = fc.constantFrom('```', '```ts', '```python', '~~~', '````md');
const block = fc.oneof(
  { weight: 5, arbitrary: fc.array(line, { minLength: 1, maxLength: 8 }).map((ls) => ls.join('\n')) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fence, fc.array(line, { minLength: 0, maxLength: 40 }), fc.boolean())
      .map(([f, ls, closed]) => [f, ...ls, ...(closed ? [f.replace(/[a-z]+$/, '')] : [])].join('\n')),
  },
);
const markdown = fc.array(block, { minLength: 1, maxLength: 12 }).map((blocks) => blocks.join('\n\n'));

describe('chunkDiscordMarkdown', () => {
  it('returns short text as one chunk and blank text as none', () => {
    expect(chunkDiscordMarkdown('hello **world**')).toEqual(['hello **world**']);
    expect(chunkDiscordMarkdown('  \n\n ')).toEqual([]);
  });

  it('keeps every chunk within the limit, non-blank, with balanced fences, and loses no content', () => {
    fc.assert(
      fc.property(markdown, fc.integer({ min: 120, max: 2000 }), (text, limit) => {
        const chunks = chunkDiscordMarkdown(text, limit);
        for (const chunk of chunks) {
          expect(chunk.length).toBeLessThanOrEqual(limit);
          expect(chunk.trim()).not.toBe('');
        }
        // Every chunk but the last closes what it opens; the last may only leave open what the text left open.
        for (const chunk of chunks.slice(0, -1)) expect(openFenceAtEnd(chunk)).toBeUndefined();
        if (chunks.length > 0 && openFenceAtEnd(text) === undefined) {
          expect(openFenceAtEnd(chunks.at(-1)!)).toBeUndefined();
        }
        expect(preservesContent(text, chunks)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('closes a code block cut across chunks and reopens it with its language', () => {
    const code = Array.from({ length: 200 }, (_, i) => `const value${i} = compute(${i}); // line ${i}`);
    const text = `Here is the code:\n\n\`\`\`typescript\n${code.join('\n')}\n\`\`\`\n\nThat is all.`;
    const chunks = chunkDiscordMarkdown(text);
    expect(chunks.length).toBeGreaterThan(3);
    for (const chunk of chunks) expect(chunk.length).toBeLessThanOrEqual(2000);
    expect(chunks[0]).toMatch(/\n```$/);
    for (const chunk of chunks.slice(1, -1)) {
      expect(chunk.startsWith('```typescript\n')).toBe(true);
      expect(chunk.endsWith('\n```')).toBe(true);
    }
    expect(chunks.at(-1)).toMatch(/That is all\.$/);
    expect(preservesContent(text, chunks)).toBe(true);
  });

  it('prefers paragraph boundaries over filling every chunk', () => {
    const paragraph = (n: number): string =>
      `Paragraph ${n}. ${'lorem ipsum dolor sit amet '.repeat(22).trim()}`;
    const text = Array.from({ length: 9 }, (_, i) => paragraph(i)).join('\n\n');
    const chunks = chunkDiscordMarkdown(text);
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) {
      expect(chunk).toMatch(/^Paragraph \d+\./);
      expect(chunk).toMatch(/amet$/);
    }
  });

  it('starts a code block in a new chunk rather than splitting it when there is room', () => {
    const prose = 'word '.repeat(300).trim();
    const code = `\`\`\`js\n${'console.log(1);\n'.repeat(40)}\`\`\``;
    const chunks = chunkDiscordMarkdown(`${prose}\n\n${code}`);
    expect(chunks).toEqual([prose, code]);
  });
});

describe('splitLongLine', () => {
  it('cuts at whitespace outside inline markup', () => {
    const line = `${'aaaa '.repeat(14)}**keep these words together** tail`;
    const pieces = splitLongLine(line, 80, true);
    expect(pieces.join('')).toBe(line);
    expect(pieces.some((p) => p.includes('**keep these words together**'))).toBe(true);
    for (const piece of pieces) expect(piece.length).toBeLessThanOrEqual(80);
  });

  it('never splits a surrogate pair when it must cut inside a word', () => {
    const line = '😀'.repeat(100);
    const pieces = splitLongLine(line, 33, true);
    expect(pieces.join('')).toBe(line);
    for (const piece of pieces) {
      expect(piece.length).toBeLessThanOrEqual(33);
      expect(piece).toBe(Array.from(piece).join(''));
      expect(/^[\uDC00-\uDFFF]/.test(piece)).toBe(false);
    }
  });
});
