import { describe, expect, it } from 'vitest';
import { jsonBytes, largestFitting } from './fit-json.js';

describe('largestFitting', () => {
  it('finds the longest prefix that fits, including none and all', () => {
    expect(largestFitting(10, (k) => k <= 7)).toBe(7);
    expect(largestFitting(10, () => true)).toBe(10);
    expect(largestFitting(10, (k) => k === 0)).toBe(0);
    expect(largestFitting(0, () => true)).toBe(0);
  });
});

describe('jsonBytes', () => {
  it('counts UTF-8 bytes of the pretty JSON', () => {
    expect(jsonBytes({ a: 'é' })).toBe(Buffer.byteLength(JSON.stringify({ a: 'é' }, null, 2)));
  });
});
