import { describe, expect, it, vi } from 'vitest';
import { SpanIds } from './span-ids.js';

const zeroPrefix = vi.hoisted(() => ({ bytes: 0 }));
vi.mock('node:crypto', async (importOriginal) => {
  const crypto = await importOriginal<typeof import('node:crypto')>();
  return {
    ...crypto,
    // Lets a test draw a pool whose first bytes are zero.
    randomBytes: (size: number) => {
      const bytes = crypto.randomBytes(size);
      bytes.fill(0, 0, zeroPrefix.bytes);
      return bytes;
    },
  };
});

describe('SpanIds', () => {
  it('gives distinct lower-case hex ids of the W3C lengths across several pools of random bytes', () => {
    const ids = new SpanIds();
    // 1,000 span ids and 1,000 trace ids use up six 4 KiB pools, so ids are cut across refills.
    const spans = Array.from({ length: 1000 }, () => ids.spanId());
    const traces = Array.from({ length: 1000 }, () => ids.traceId());
    for (const id of spans) expect(id).toMatch(/^[0-9a-f]{16}$/);
    for (const id of traces) expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(new Set([...spans, ...traces]).size).toBe(2000);
  });

  it.each([
    ['trace id', 16, (ids: SpanIds) => ids.traceId()],
    ['span id', 8, (ids: SpanIds) => ids.spanId()],
  ])('skips an all-zero %s (the API invalid one) and gives the next one drawn', (_, bytes, draw) => {
    zeroPrefix.bytes = bytes; // the first id of the pool is all zeros
    try {
      expect(draw(new SpanIds())).toMatch(new RegExp(`^(?!0+$)[0-9a-f]{${bytes * 2}}$`));
    } finally {
      zeroPrefix.bytes = 0;
    }
  });
});
