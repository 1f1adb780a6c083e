import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HISTORY_MAX_BYTES, HISTORY_OMITTED_PLACEHOLDER } from '../history/index.js';
import type { MessageRole, StoredMessage } from '../interfaces/records.js';
import { pageOfHistory } from './sessions-history.js';

/** A message whose text blocks hold `blocks` x 3,000 characters: 28 blocks are over 80 KiB of JSON. */
function message(seq: number, role: MessageRole, blocks: number): StoredMessage {
  const content = Array.from({ length: blocks }, (_, i) => ({
    type: 'text' as const,
    text: `${seq}.${i} ${'w'.repeat(3000)}`,
  }));
  return { seq, role, content: blocks === 0 ? `message ${seq}` : content, timestamp: seq };
}
const HUGE_BLOCKS = 28;
const isHuge = (m: StoredMessage) => Buffer.byteLength(JSON.stringify(m)) > HISTORY_MAX_BYTES;

/** What `readTail(limit, { offset })` returns: the newest `limit` messages before the newest `offset`. */
function readTail(transcript: readonly StoredMessage[], limit: number, offset: number): StoredMessage[] {
  const end = Math.max(0, transcript.length - offset);
  return transcript.slice(Math.max(0, end - limit), end);
}

/** Pages from offset 0 by nextOffset; returns what each page shows, newest first (seq or 'placeholder'). */
function pageThrough(transcript: readonly StoredMessage[], limit: number, includeTools: boolean) {
  const shown: Array<number | 'placeholder'> = [];
  let offset = 0;
  for (let pages = 1; ; pages++) {
    const page = pageOfHistory(
      readTail(transcript, limit, offset),
      { offset, total: transcript.length },
      { includeTools },
    );
    expect(page.totalBytes).toBeLessThanOrEqual(HISTORY_MAX_BYTES);
    for (const m of [...page.messages].reverse()) {
      shown.push(m.seq ?? (m.content === HISTORY_OMITTED_PLACEHOLDER.content ? 'placeholder' : Number.NaN));
    }
    if (!page.hasMore) return { shown, pages };
    expect(page.nextOffset).toBeGreaterThan(offset);
    offset = page.nextOffset!;
    expect(pages).toBeLessThanOrEqual(transcript.length);
  }
}

describe('sessions_history paging', () => {
  it('resumes right after a too-large tool result shown as the placeholder, so the older message is shown', () => {
    const transcript = [message(1, 'user', 0), message(2, 'toolResult', HUGE_BLOCKS)];
    const first = pageOfHistory(transcript, { offset: 0, total: 2 }, { includeTools: true });
    expect(first.messages).toEqual([HISTORY_OMITTED_PLACEHOLDER]);
    expect(first).toMatchObject({ hardCapped: true, hasMore: true, nextOffset: 1 });
    const second = pageOfHistory(readTail(transcript, 2, 1), { offset: 1, total: 2 }, { includeTools: true });
    expect(second.messages.map((m) => m.seq)).toEqual([1]);
    expect(second.hasMore).toBe(false);
  });

  it('steps past tool results newer than a too-large message when tools are left out', () => {
    const transcript = [
      message(1, 'user', 0),
      message(2, 'assistant', HUGE_BLOCKS),
      message(3, 'toolResult', 0),
    ];
    const first = pageOfHistory(transcript, { offset: 0, total: 3 }, { includeTools: false });
    expect(first.messages).toEqual([HISTORY_OMITTED_PLACEHOLDER]);
    expect(first.nextOffset).toBe(2);
  });

  it('shows every kept message exactly once, newest first, whatever the sizes, roles and limit', () => {
    const messageArb = fc.record({
      role: fc.constantFrom<MessageRole>('user', 'assistant', 'toolResult'),
      // Mostly small, some that fill a page in two or three, some over the cap on their own.
      blocks: fc.oneof(
        { weight: 3, arbitrary: fc.constant(0) },
        { weight: 2, arbitrary: fc.integer({ min: 1, max: 20 }) },
        { weight: 1, arbitrary: fc.integer({ min: HUGE_BLOCKS, max: HUGE_BLOCKS + 4 }) },
      ),
    });
    fc.assert(
      fc.property(
        fc.array(messageArb, { maxLength: 24 }),
        fc.integer({ min: 1, max: 8 }),
        fc.boolean(),
        (specs, limit, includeTools) => {
          const transcript = specs.map((spec, i) => message(i + 1, spec.role, spec.blocks));
          const expected = transcript
            .filter((m) => includeTools || m.role !== 'toolResult')
            .map((m) => (isHuge(m) ? 'placeholder' : m.seq))
            .reverse();
          expect(pageThrough(transcript, limit, includeTools).shown).toEqual(expected);
        },
      ),
      { numRuns: 150 },
    );
  });
});
