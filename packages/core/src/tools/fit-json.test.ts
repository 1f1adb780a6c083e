import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { arrayJsonBytes, jsonBytes, nestedJsonBytes } from './fit-json.js';

const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value, null, 2));

/** `value` placed `depth` levels deep: `depth` arrays holding it last after a sibling. */
function nestInArrays(value: unknown, depth: number): unknown {
  let wrapped = value;
  for (let i = 0; i < depth; i++) wrapped = [0, wrapped];
  return wrapped;
}

describe('jsonBytes', () => {
  it('counts UTF-8 bytes of the pretty JSON', () => {
    expect(jsonBytes({ a: 'é' })).toBe(Buffer.byteLength(JSON.stringify({ a: 'é' }, null, 2)));
  });
});

describe('nestedJsonBytes and arrayJsonBytes', () => {
  it('add up to the bytes of the pretty JSON that holds the values, at any depth', () => {
    fc.assert(
      fc.property(
        fc.array(fc.jsonValue(), { maxLength: 5 }),
        fc.integer({ min: 0, max: 4 }),
        (items, depth) => {
          // The array's own bytes: the whole minus what its `depth` wrapping arrays add around it.
          const whole = bytes(nestInArrays(items, depth));
          const around = bytes(nestInArrays([], depth)) - 2;
          const sizes = items.map((item) => nestedJsonBytes(item, depth + 1));
          expect(arrayJsonBytes(sizes, depth)).toBe(whole - around);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('measure an empty array and a row of a result as JSON.stringify writes them', () => {
    expect(arrayJsonBytes([], 3)).toBe(2);
    const row = { key: 'k', messages: [{ role: 'user', content: 'hé' }] };
    const result = { count: 1, sessions: [row] };
    const shell = bytes({ count: 1, sessions: [] });
    expect(shell - 2 + arrayJsonBytes([nestedJsonBytes(row, 2)], 1)).toBe(bytes(result));
  });
});
