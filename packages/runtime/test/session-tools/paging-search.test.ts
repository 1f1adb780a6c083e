import type { TranscriptMessage } from '@colloquy/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS } from '../support/harness.js';
import { call, seed, startToolsHarness, T0, type ToolsHarness } from './tools-fixture.js';

const MAIN = 'agent:main:main';
const SECRET = 'zq-configured-secret-771';

const user = (text: string, i = 0): TranscriptMessage => ({ role: 'user', content: text, timestamp: T0 + i });

interface ListPage {
  count: number;
  sessions: { key: string }[];
  nextOffset?: number;
  truncated?: boolean;
  truncationReason?: string;
  filtered?: { hidden: number };
}
interface HistoryPage {
  messages: { content: unknown; seq?: number }[];
  hasMore: boolean;
  nextOffset?: number;
  hardCapped: boolean;
  totalBytes: number;
}
interface SearchPage {
  count: number;
  hits: { sessionKey: string; messageIndex: number; role: string; at: number; snippet: string }[];
  redacted: boolean;
  nextOffset?: number;
  filtered?: { hidden: number; reason: string };
}
interface Failure {
  status: string;
  error: string;
}

describe.each(STORE_KINDS)('paging and search through the runtime (%s store)', (storeKind) => {
  let h: ToolsHarness;
  beforeAll(async () => {
    h = await startToolsHarness(
      {
        tools: { sessions: { visibility: 'tree' } },
        redaction: { secrets: [SECRET] },
      },
      {},
      { storeKind },
    );
    await seed(h.store, MAIN, { updatedAt: T0 + 1000 });
    for (let i = 0; i < 25; i++) {
      await seed(h.store, `agent:main:subagent:c${String(i).padStart(2, '0')}`, {
        spawnedBy: MAIN,
        spawnDepth: 1,
        updatedAt: T0 + 500 - i,
        displayName: `child ${i} ${'x'.repeat(3000)}`,
      });
    }
    await seed(h.store, 'agent:main:telegram:group:team', { updatedAt: T0 + 900 });
    await seed(h.store, 'agent:ops:main', { updatedAt: T0 + 800 });
    await h.store.appendMessages(
      MAIN,
      Array.from({ length: 120 }, (_, i) => user(`m${i + 1}`, i)),
    );
    await h.store.appendMessages('agent:main:subagent:c00', [
      user('the lighthouse keeper counts gulls'),
      {
        role: 'assistant',
        content: [{ type: 'text', text: `lighthouse keeper: lighthouse, lighthouse keeper token ${SECRET}` }],
        timestamp: T0 + 1,
      },
      { role: 'toolResult', content: 'lighthouse keeper toolonlyword', toolCallId: 't1', timestamp: T0 + 2 },
    ]);
    await h.store.appendMessages('agent:main:subagent:c01', [
      user(`lighthouse keeper ${'padding words '.repeat(40)}`),
    ]);
    await h.store.appendMessages('agent:main:telegram:group:team', [
      user('lighthouse keeper in the team group'),
    ]);
    await h.store.appendMessages('agent:ops:main', [user('lighthouse keeper at ops')]);
    const many = Array.from({ length: 60 }, (_, i) => user(`beacon number ${i}`, i));
    await h.store.appendMessages('agent:main:subagent:c02', many);
  });
  afterAll(async () => {
    await h?.close();
  });

  describe('sessions_list', () => {
    it('pages with offset and nextOffset, floors offsets, ignores non-finite ones', async () => {
      const list = h.tools(MAIN).sessions_list;
      const first = await call<ListPage>(list, { limit: 10, kinds: ['subagent'] });
      expect(first.sessions.map((s) => s.key)).toHaveLength(10);
      expect(first.nextOffset).toBe(10);
      const second = await call<ListPage>(list, { limit: 10, kinds: ['subagent'], offset: 10.9 });
      const third = await call<ListPage>(list, { limit: 10, kinds: ['subagent'], offset: second.nextOffset });
      expect(third.count).toBe(5);
      expect(third.nextOffset).toBeUndefined();
      const keys = [...first.sessions, ...second.sessions, ...third.sessions].map((s) => s.key);
      expect(new Set(keys).size).toBe(25);
      const again = await call<ListPage>(list, { limit: 10, kinds: ['subagent'], offset: Number.NaN });
      expect(again.sessions).toEqual(first.sessions);
    });

    it('caps the result at 64 KiB by dropping rows from the end, and the next page resumes there', async () => {
      const list = h.tools(MAIN).sessions_list;
      const page = await call<ListPage>(list, {});
      const result = await list!.execute('c', {});
      expect(Buffer.byteLength(result.content[0].text)).toBeLessThanOrEqual(64 * 1024);
      expect(page.truncated).toBe(true);
      expect(page.truncationReason).toMatch(/64 KiB/);
      expect(page.count).toBeGreaterThan(0);
      expect(page.count).toBeLessThan(26);
      const rest = await call<ListPage>(list, { offset: page.nextOffset });
      const seen = [...page.sessions, ...rest.sessions].map((s) => s.key);
      expect(new Set(seen).size).toBe(seen.length);
      expect(page.filtered?.hidden).toBeGreaterThan(0);
    });

    it('refuses a negative offset with a sentence naming it', async () => {
      const failure = await call<Failure>(h.tools(MAIN).sessions_list, { offset: -1 });
      expect(failure.status).toBe('error');
      expect(failure.error).toMatch(/sessions_list.*\/offset/);
    });
  });

  describe('sessions_history', () => {
    it('pages back from the newest message with offset, nextOffset and hasMore', async () => {
      const history = h.tools(MAIN).sessions_history;
      const newest = await call<HistoryPage>(history, { sessionKey: 'main' });
      expect(newest.messages.map((m) => m.content)).toEqual(
        Array.from({ length: 50 }, (_, i) => `m${i + 71}`),
      );
      expect(newest).toMatchObject({ hasMore: true, nextOffset: 50 });
      const older = await call<HistoryPage>(history, { sessionKey: 'main', offset: 50 });
      expect(older.messages[0]?.content).toBe('m21');
      expect(older.messages.at(-1)?.content).toBe('m70');
      const oldest = await call<HistoryPage>(history, { sessionKey: 'main', offset: 100.7, limit: 50 });
      expect(oldest.messages.map((m) => m.content)).toEqual(
        Array.from({ length: 20 }, (_, i) => `m${i + 1}`),
      );
      expect(oldest.hasMore).toBe(false);
      expect(oldest.nextOffset).toBeUndefined();
      expect((await call<HistoryPage>(history, { sessionKey: 'main', offset: 500 })).messages).toEqual([]);
    });

    it('keeps the 80 KiB cap per page and resumes at the oldest message the cap dropped', async () => {
      const key = 'agent:main:subagent:c03';
      const big = Array.from({ length: 40 }, (_, i) => user(`big${i} ${'y'.repeat(3800)}`, i));
      await h.store.appendMessages(key, big);
      const history = h.tools(MAIN).sessions_history;
      const page = await call<HistoryPage>(history, { sessionKey: key, limit: 40 });
      expect(page.hardCapped).toBe(true);
      expect(page.totalBytes).toBeLessThanOrEqual(80 * 1024);
      const shown = page.messages.length;
      expect(page.nextOffset).toBe(shown);
      const next = await call<HistoryPage>(history, { sessionKey: key, limit: 40, offset: page.nextOffset });
      expect(String(next.messages.at(-1)?.content)).toMatch(new RegExp(`^big${39 - shown} `));
    });

    it('shows the message older than a too-large tool result on the next page', async () => {
      const key = 'agent:main:subagent:c04';
      const hugeResult = Array.from({ length: 28 }, (_, i) => ({
        type: 'text' as const,
        text: `${i} ${'t'.repeat(3000)}`,
      }));
      await h.store.appendMessages(key, [
        user('the older message'),
        { role: 'toolResult', content: hugeResult, toolCallId: 't-huge', timestamp: T0 + 1 },
      ]);
      const history = h.tools(MAIN).sessions_history;
      const first = await call<HistoryPage>(history, { sessionKey: key, includeTools: true, limit: 5 });
      expect(first.messages).toEqual([
        { role: 'assistant', content: '[sessions_history omitted: message too large]' },
      ]);
      expect(first).toMatchObject({ hardCapped: true, hasMore: true, nextOffset: 1 });
      const second = await call<HistoryPage>(history, {
        sessionKey: key,
        includeTools: true,
        limit: 5,
        offset: first.nextOffset,
      });
      expect(second.messages.map((m) => m.content)).toEqual(['the older message']);
      expect(second.hasMore).toBe(false);
    });

    it('refuses a session the guard hides, whatever the offset', async () => {
      const failure = await call<Failure>(h.tools(MAIN).sessions_history, {
        sessionKey: 'agent:ops:main',
        offset: 3,
      });
      expect(failure.status).toBe('forbidden');
    });
  });

  describe('sessions_search', () => {
    it('ranks hits, redacts configured secrets in snippets, and does not search tool results', async () => {
      const search = h.tools(MAIN).sessions_search;
      const found = await call<SearchPage>(search, { query: 'Lighthouse KEEPER' });
      expect(found.hits[0]).toMatchObject({
        sessionKey: 'agent:main:subagent:c00',
        messageIndex: 1,
        role: 'assistant',
        at: T0 + 1,
      });
      expect(found.hits.map((hit) => hit.sessionKey).sort()).toEqual([
        'agent:main:subagent:c00',
        'agent:main:subagent:c00',
        'agent:main:subagent:c01',
      ]);
      expect(found.redacted).toBe(true);
      expect(JSON.stringify(found)).not.toContain(SECRET);
      expect(found.hits.every((hit) => hit.snippet.length <= 242)).toBe(true);
      expect((await call<SearchPage>(search, { query: 'toolonlyword' })).count).toBe(0);
    });

    it('tells how many matches visibility hid, and never shows them', async () => {
      const found = await call<SearchPage>(h.tools(MAIN).sessions_search, { query: 'lighthouse keeper' });
      // The team group's match: its own agent's. The match at ops is not counted, because
      // agent-to-agent is off and main could never see it (spec section 11).
      expect(found.filtered).toMatchObject({ hidden: 1 });
      expect(found.filtered?.reason).toContain('tools.sessions.visibility');
      expect(JSON.stringify(found)).not.toMatch(/team group|at ops/);
    });

    it('defaults to 10 hits, clamps limit at 50, and pages with offset', async () => {
      const search = h.tools(MAIN).sessions_search;
      const first = await call<SearchPage>(search, { query: 'beacon' });
      expect(first.count).toBe(10);
      expect(first.nextOffset).toBe(10);
      const clamped = await call<SearchPage>(search, { query: 'beacon', limit: 1000 });
      expect(clamped.count).toBe(50);
      expect(clamped.nextOffset).toBe(50);
      const last = await call<SearchPage>(search, { query: 'beacon', limit: 50, offset: 50.5 });
      expect(last.count).toBe(10);
      expect(last.nextOffset).toBeUndefined();
      const all = [...clamped.hits, ...last.hits].map((hit) => hit.messageIndex);
      expect(new Set(all).size).toBe(60);
    });

    it('filters by kinds and by one visible session', async () => {
      const search = h.tools(MAIN).sessions_search;
      expect((await call<SearchPage>(search, { query: 'lighthouse', kinds: ['group'] })).count).toBe(0);
      const one = await call<SearchPage>(search, {
        query: 'lighthouse',
        sessionKey: 'agent:main:subagent:c01',
      });
      expect(one.hits.map((hit) => hit.sessionKey)).toEqual(['agent:main:subagent:c01']);
    });

    it('refuses a hidden sessionKey with the answer a missing one gets', async () => {
      const search = h.tools(MAIN).sessions_search;
      const hidden = await call<Failure>(search, { query: 'lighthouse', sessionKey: 'agent:ops:main' });
      const missing = await call<Failure>(search, { query: 'lighthouse', sessionKey: 'agent:ops:nothing' });
      expect(hidden.status).toBe('forbidden');
      expect(hidden).toEqual(missing);
      expect(hidden.error).not.toContain('agent:ops:main');
    });

    it('answers bad arguments with a clear sentence', async () => {
      const search = h.tools(MAIN).sessions_search;
      const noWords = await call<Failure>(search, { query: ' "*" ' });
      expect(noWords).toEqual({
        status: 'error',
        error: 'The query has no words to search for: pass one or more words (letters or digits).',
      });
      const missing = await call<Failure>(search, {});
      expect(missing.error).toMatch(/^Invalid arguments for sessions_search: \/query/);
      const badLimit = await call<Failure>(search, { query: 'x', limit: 0 });
      expect(badLimit.error).toMatch(/\/limit/);
      const unknown = await call<Failure>(search, { query: 'x', page: 2 });
      expect(unknown.status).toBe('error');
    });
  });
});
