import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fitRows } from './fit-rows.js';

interface Row {
  key: string;
  displayName: string;
  messages?: { role: string; content: string }[];
  messagesTrimmed?: number;
}

/** UTF-8 bytes of `rows` as the `sessions` array of a pretty JSON result (depth 1), by JSON.stringify. */
const arrayBytes = (rows: readonly Row[]) =>
  Buffer.byteLength(JSON.stringify({ sessions: rows }, null, 2)) -
  Buffer.byteLength(JSON.stringify({ sessions: [] }, null, 2)) +
  2;

const row = (key: string, nameChars: number, messageChars?: number[]): Row => ({
  key,
  displayName: 'n'.repeat(nameChars),
  ...(messageChars
    ? { messages: messageChars.map((chars, i) => ({ role: 'user', content: `${i}:${'m'.repeat(chars)}` })) }
    : {}),
});

/** The row without its `drop` oldest messages, as fitRows writes it. */
const without = (r: Row, drop: number): Row => ({
  ...r,
  messages: (r.messages ?? []).slice(drop),
  messagesTrimmed: drop,
});

/** The smallest form of a row: without all its messages, when it has some. */
const bare = (r: Row): Row => (r.messages?.length ? without(r, r.messages.length) : r);

describe('fitRows', () => {
  it('shows the first row without its oldest messages rather than nothing', () => {
    const big = row('a', 10, [20_000, 20_000, 20_000, 20_000]);
    const fitted = fitRows([big, row('b', 10, [5])], 50_000, 1);
    expect(fitted.rows.map((r) => [r.key, r.messagesTrimmed, r.messages?.length])).toEqual([
      ['a', 2, 2],
      ['b', undefined, 1],
    ]);
    expect(fitted).toMatchObject({ consumed: 2, skipped: 0 });
    expect(arrayBytes(fitted.rows)).toBeLessThanOrEqual(50_000);
  });

  it('adds the messages it leaves out to those a row says were left out already', () => {
    const capped = { ...row('a', 10, [20_000, 20_000, 20_000]), messagesTrimmed: 4 };
    expect(fitRows([capped], 30_000, 1).rows[0]).toMatchObject({ messagesTrimmed: 6 });
    expect(fitRows([capped], 70_000, 1).rows[0]).toBe(capped);
  });

  it('skips a row that cannot fit even without messages only when it would lead the page', () => {
    const huge = row('huge', 60_000, [10]);
    expect(fitRows([huge, row('b', 10)], 50_000, 1)).toMatchObject({
      rows: [row('b', 10)],
      consumed: 2,
      skipped: 1,
    });
    expect(fitRows([row('a', 10), huge, row('c', 10)], 50_000, 1)).toMatchObject({
      rows: [row('a', 10)],
      consumed: 1,
      skipped: 0,
    });
  });

  it('keeps to the budget, trims as little as it can, and always accounts for a row', () => {
    const rowArb = fc.tuple(
      fc.integer({ min: 0, max: 3_000 }),
      fc.option(fc.array(fc.integer({ min: 0, max: 20_000 }), { maxLength: 20 }), { nil: undefined }),
    );
    fc.assert(
      fc.property(
        fc.array(rowArb, { maxLength: 30 }),
        fc.integer({ min: 200, max: 70_000 }),
        (specs, budget) => {
          const rows = specs.map(([name, messages], i) => row(`r${i}`, name, messages));
          const fitted = fitRows(rows, budget, 1);
          expect(arrayBytes(fitted.rows)).toBeLessThanOrEqual(budget);
          if (rows.length > 0) expect(fitted.consumed).toBeGreaterThan(0);
          // Skipped rows lead; the shown ones follow in order, each whole or without its oldest messages.
          const skipped = rows.slice(0, fitted.skipped);
          for (const r of skipped) expect(arrayBytes([bare(r)])).toBeGreaterThan(budget);
          const shown = rows.slice(fitted.skipped, fitted.consumed);
          expect(fitted.rows.map((r) => r.key)).toEqual(shown.map((r) => r.key));
          fitted.rows.forEach((r, i) => {
            const original = shown[i]!;
            if (r.messagesTrimmed === undefined) {
              expect(r).toEqual(original);
              return;
            }
            expect(r).toEqual(without(original, r.messagesTrimmed));
            // One message fewer left out would not fit.
            const richer = r.messagesTrimmed === 1 ? original : without(original, r.messagesTrimmed - 1);
            expect(arrayBytes([...fitted.rows.slice(0, i), richer])).toBeGreaterThan(budget);
          });
          // The row after the last one taken does not fit even without messages.
          const next = rows[fitted.consumed];
          if (next) expect(arrayBytes([...fitted.rows, bare(next)])).toBeGreaterThan(budget);
        },
      ),
      { numRuns: 200 },
    );
  });
});
