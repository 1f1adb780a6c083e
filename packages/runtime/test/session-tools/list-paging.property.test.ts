import type { AgentTool, TranscriptMessage } from '@colloquy/core';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS } from '../support/harness.js';
import { seed, startToolsHarness, T0, type ToolsHarness } from './tools-fixture.js';

/**
 * sessions_list pages that must fit in 64 KiB: a row is always shown (without its oldest messages if
 * need be), so following nextOffset always ends and shows every visible session exactly once.
 */
const CAP = 64 * 1024;

interface ListRow {
  key: string;
  messages?: { content: unknown }[];
  messagesTrimmed?: number;
}
interface ListPage {
  count: number;
  sessions: ListRow[];
  nextOffset?: number;
  truncated?: true;
  truncationReason?: string;
}

/** A message of `blocks` text blocks of 4,000 characters (the most sanitising keeps of one text). */
const message = (n: number, blocks: number): TranscriptMessage => ({
  role: n % 2 === 0 ? 'user' : 'assistant',
  content:
    blocks === 0
      ? `message ${n}`
      : Array.from({ length: blocks }, (_, i) => ({
          type: 'text' as const,
          text: `${n}.${i} ${'z'.repeat(3990)}`,
        })),
  timestamp: T0 + n,
});
/** The number a message was made with, read back from its sanitised content. */
const numberOf = (m: { content: unknown }): number =>
  Number.parseInt(
    typeof m.content === 'string'
      ? m.content.replace('message ', '')
      : (m.content as { text: string }[])[0]!.text,
    10,
  );

/** Runs sessions_list and returns its result with the size of the text the model reads. */
async function listPage(tool: AgentTool | undefined, args: Record<string, unknown>) {
  const result = await tool!.execute('list', args as never);
  const text = result.content[0].text;
  return { page: JSON.parse(text) as ListPage, bytes: Buffer.byteLength(text) };
}

describe.each(STORE_KINDS)('sessions_list fits every page and always moves on (%s store)', (storeKind) => {
  let h: ToolsHarness;
  let agents = 0;
  beforeAll(async () => {
    h = await startToolsHarness({ tools: { sessions: { visibility: 'agent' } } }, {}, { storeKind });
  });
  afterAll(async () => {
    await h?.close();
  });

  /** A fresh agent whose main session sees only the sessions made here; returns its main key. */
  async function agentWith(sessions: { nameChars: number; messages: number[] }[]): Promise<string> {
    const agent = `p${++agents}`;
    const main = `agent:${agent}:main`;
    await seed(h.store, main, { updatedAt: T0 + 10_000 });
    for (const [i, spec] of sessions.entries()) {
      const key = `agent:${agent}:subagent:s${i}`;
      await seed(h.store, key, {
        updatedAt: T0 + 5_000 - i,
        displayName: `s${i} ${'d'.repeat(spec.nameChars)}`,
      });
      if (spec.messages.length > 0)
        await h.store.appendMessages(
          key,
          spec.messages.map((blocks, n) => message(n, blocks)),
        );
    }
    return main;
  }

  it('shows one session whose last 20 messages are 20 KB each, without its oldest messages', async () => {
    const main = await agentWith([{ nameChars: 0, messages: Array.from({ length: 20 }, () => 5) }]);
    const list = h.tools(main).sessions_list;
    const { page, bytes } = await listPage(list, { messageLimit: 20, kinds: ['subagent'] });
    expect(bytes).toBeLessThanOrEqual(CAP);
    expect(page.count).toBe(1);
    expect(page.nextOffset).toBeUndefined();
    const [row] = page.sessions;
    expect(row!.messagesTrimmed).toBeGreaterThan(0);
    expect(row!.messages!.length + row!.messagesTrimmed!).toBe(20);
    expect(row!.messages!.map(numberOf)).toEqual(
      Array.from({ length: row!.messages!.length }, (_, i) => 20 - row!.messages!.length + i),
    );
    expect(page).toMatchObject({ truncated: true });
    expect(page.truncationReason).toMatch(/messagesTrimmed/);
  });

  it('covers every session exactly once, newest first, whatever the sizes, limit and messageLimit', async () => {
    const sessionArb = fc.record({
      // Some names too long for a page even without messages: those rows are skipped, and said so.
      nameChars: fc.oneof(
        { weight: 9, arbitrary: fc.integer({ min: 0, max: 3_000 }) },
        { weight: 1, arbitrary: fc.constant(70_000) },
      ),
      messages: fc.array(fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 5 })), { maxLength: 22 }),
    });
    const seen = { trimmed: 0, skipped: 0, dropped: 0 };
    await fc.assert(
      fc.asyncProperty(
        fc.array(sessionArb, { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 0, max: 20 }),
        async (sessions, limit, messageLimit) => {
          const main = await agentWith(sessions);
          const agent = main.split(':')[1];
          const list = h.tools(main).sessions_list;
          const listable = sessions.flatMap((spec, i) =>
            spec.nameChars < 70_000 ? [`agent:${agent}:subagent:s${i}`] : [],
          );
          const shown: string[] = [];
          let offset = 0;
          let skippedSaid = 0;
          for (let calls = 1; ; calls++) {
            expect(calls).toBeLessThanOrEqual(sessions.length + 2);
            const { page, bytes } = await listPage(list, {
              kinds: ['subagent'],
              limit,
              offset,
              messageLimit,
            });
            expect(bytes).toBeLessThanOrEqual(CAP);
            if (/skipped/.test(page.truncationReason ?? '')) skippedSaid += 1;
            if (/did not fit/.test(page.truncationReason ?? '')) seen.dropped += 1;
            for (const row of page.sessions) {
              shown.push(row.key);
              if (row.messagesTrimmed !== undefined) seen.trimmed += 1;
              const spec = sessions[Number(row.key.split(':s').at(-1))]!;
              const expected = Math.min(messageLimit, spec.messages.length);
              if (messageLimit === 0) expect(row.messages).toBeUndefined();
              else {
                expect(row.messages!.length + (row.messagesTrimmed ?? 0)).toBe(expected);
                expect(row.messages!.map(numberOf)).toEqual(
                  Array.from(
                    { length: row.messages!.length },
                    (_, i) => spec.messages.length - row.messages!.length + i,
                  ),
                );
              }
            }
            if (page.nextOffset === undefined) break;
            expect(page.nextOffset).toBeGreaterThan(offset);
            offset = page.nextOffset;
          }
          expect(shown).toEqual(listable);
          if (listable.length < sessions.length) expect(skippedSaid).toBeGreaterThan(0);
          seen.skipped += skippedSaid;
        },
      ),
      {
        numRuns: storeKind === 'postgres' ? 15 : 30,
        // A case that trims, drops and skips, so the checks below never rest on luck: the newest row
        // is trimmed to about 60 KiB of messages, so the next one (40 KB of name, which no trimming
        // shrinks) does not fit after it and opens the next page, and the oldest fits no page.
        // (Two rows of messages alone do not: the second fits without its messages whenever the
        // first leaves a few hundred bytes, which depends on the sizes of both rows' fields.)
        examples: [
          [
            [
              { nameChars: 0, messages: Array.from({ length: 20 }, () => 5) },
              { nameChars: 40_000, messages: [] },
              { nameChars: 70_000, messages: [] },
            ],
            8,
            20,
          ],
        ],
      },
    );
    expect(seen.trimmed).toBeGreaterThan(0);
    expect(seen.skipped).toBeGreaterThan(0);
    expect(seen.dropped).toBeGreaterThan(0);
  });
});
