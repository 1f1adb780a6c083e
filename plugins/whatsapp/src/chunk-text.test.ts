import { describe, expect, it } from 'vitest';
import { chunkText } from './chunk-text.js';

/** A small deterministic PRNG, so failures reproduce. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const words = ['alpha', 'beta', 'gamma', 'delta.', 'epsilon,', 'zeta!', '😀', 'supercalifragilistic', 'η'];

function randomText(rand: () => number, length: number): string {
  let out = '';
  let inCode = false;
  while (out.length < length) {
    const r = rand();
    if (r < 0.04) {
      out += inCode ? '\n```\n' : '\n```\n';
      inCode = !inCode;
    } else if (r < 0.1) out += '\n\n';
    else if (r < 0.15) out += '\n';
    else out += `${words[Math.floor(rand() * words.length)]} `;
  }
  return inCode ? `${out}\n\`\`\`` : out;
}

const squash = (s: string): string => s.replace(/```/g, '').replace(/\s+/g, '');

describe('chunkText', () => {
  it('returns short text as one chunk and empty text as none', () => {
    expect(chunkText('hello', 4000)).toEqual(['hello']);
    expect(chunkText('  \n ', 4000)).toEqual([]);
  });

  it('prefers paragraph breaks, then lines, then sentences', () => {
    const para = `${'a'.repeat(60)}\n\n${'b'.repeat(60)}`;
    expect(chunkText(para, 100)).toEqual(['a'.repeat(60), 'b'.repeat(60)]);
    const sentences = `${'word '.repeat(12)}ends here. ${'more '.repeat(12)}`;
    const chunks = chunkText(sentences, 80);
    expect(chunks[0]?.endsWith('ends here.')).toBe(true);
  });

  it('closes and reopens a monospace block cut in two', () => {
    const code = Array.from({ length: 30 }, (_, i) => `line ${i}`).join('\n');
    const chunks = chunkText(`Intro\n\n\`\`\`\n${code}\n\`\`\``, 120);
    expect(chunks.length).toBeGreaterThan(2);
    for (const chunk of chunks.slice(1)) expect(chunk.startsWith('```\n')).toBe(true);
    for (const chunk of chunks.slice(0, -1)) expect(chunk.endsWith('\n```')).toBe(true);
    for (const chunk of chunks) expect((chunk.match(/```/g) ?? []).length % 2).toBe(0);
  });

  it('never splits a surrogate pair when it must cut inside a word', () => {
    const chunks = chunkText('😀'.repeat(100), 33);
    for (const chunk of chunks) expect(chunk).not.toMatch(/^[\udc00-\udfff]|[\ud800-\udbff]$/);
    expect(chunks.join('')).toBe('😀'.repeat(100));
  });

  it('keeps every chunk within the limit and loses no content (generated texts)', () => {
    const rand = prng(42);
    for (let run = 0; run < 200; run++) {
      const limit = 40 + Math.floor(rand() * 300);
      const text = randomText(rand, Math.floor(rand() * 3000));
      const chunks = chunkText(text, limit);
      for (const chunk of chunks) expect(chunk.length).toBeLessThanOrEqual(limit);
      expect(squash(chunks.join(''))).toBe(squash(text));
      for (const chunk of chunks) expect((chunk.match(/```/g) ?? []).length % 2).toBe(0);
    }
  });
});
