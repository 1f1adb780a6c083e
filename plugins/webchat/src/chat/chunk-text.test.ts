import { describe, expect, it } from 'vitest';
import { chunkText } from './chunk-text.js';

describe('chunking long replies', () => {
  it('keeps a short text whole', () => {
    expect(chunkText('hello', 100)).toEqual(['hello']);
  });

  it('splits on paragraph breaks first and keeps every word once, in order', () => {
    const paragraphs = Array.from({ length: 12 }, (_, i) => `paragraph ${i} ${'word '.repeat(8).trim()}`);
    const text = paragraphs.join('\n\n');
    const chunks = chunkText(text, 120);
    for (const chunk of chunks) expect(chunk.length).toBeLessThanOrEqual(120);
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.join(' ').split(/\s+/)).toEqual(text.split(/\s+/));
    for (const chunk of chunks) expect(chunk.startsWith('paragraph')).toBe(true);
  });

  it('splits a long line at spaces, never inside a word', () => {
    const words = Array.from({ length: 400 }, (_, i) => `w${i}`);
    const chunks = chunkText(words.join(' '), 100, false);
    expect(chunks.join(' ').split(' ')).toEqual(words);
    for (const chunk of chunks) expect(chunk.length).toBeLessThanOrEqual(100);
  });

  it('cuts a word longer than the limit without losing characters', () => {
    const chunks = chunkText('x'.repeat(250), 100, false);
    expect(chunks.join('')).toBe('x'.repeat(250));
    expect(chunks.map((c) => c.length)).toEqual([100, 100, 50]);
  });

  it('closes and reopens a code fence cut in two', () => {
    const code = Array.from({ length: 30 }, (_, i) => `const v${i} = ${i};`).join('\n');
    const chunks = chunkText(`Intro\n\n\`\`\`ts\n${code}\n\`\`\`\n\nDone.`, 200);
    expect(chunks.length).toBeGreaterThan(2);
    for (const chunk of chunks) {
      expect(chunk.length).toBeLessThanOrEqual(200);
      const fences = chunk.split('\n').filter((l) => l.startsWith('```')).length;
      expect(fences % 2, chunk).toBe(0);
    }
    expect(chunks[1]!.startsWith('```ts\n')).toBe(true);
  });
});
