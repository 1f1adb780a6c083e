import type { TranscriptMessage } from '@colloquy/core';
import { SEARCH_INDEX_MAX_CHARS } from '@colloquy/core/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS } from '../support/harness.js';
import { call, seed, startToolsHarness, T0, type ToolsHarness } from './tools-fixture.js';

const MAIN = 'agent:main:main';
const CONFIGURED = 'Zq-Bank-Pin-8841';
// Fake credentials, assembled at run time so no scanner mistakes this file for a leak.
const API_KEY = ['sk-proj-', '4f9A8b7C6d5E4f3G2h1I0', 'jKlMnOpQrStUv'].join('');
const URL_PASSWORD = ['blue', 'heron', '77'].join('');

const say = (text: string, i = 0): TranscriptMessage => ({ role: 'user', content: text, timestamp: T0 + i });

interface SearchPage {
  count: number;
  hits: { sessionKey: string; snippet: string }[];
  redacted: boolean;
  nextOffset?: number;
  filtered?: { hidden: number };
}

describe.each(STORE_KINDS)('sessions_search and secrets (%s store)', (storeKind) => {
  let h: ToolsHarness;
  const search = (query: string) => call<SearchPage>(h.tools(MAIN).sessions_search, { query });
  beforeAll(async () => {
    h = await startToolsHarness(
      { tools: { sessions: { visibility: 'tree' } }, redaction: { secrets: [CONFIGURED] } },
      {},
      { storeKind },
    );
    await seed(h.store, MAIN);
    await seed(h.store, 'agent:main:subagent:c1', { spawnedBy: MAIN, spawnDepth: 1 });
    await h.store.appendMessages(MAIN, [
      say(`my bank pin is ${CONFIGURED}, keep it`),
      say(`deploy with ${API_KEY} today`, 1),
      say(`the database is postgres://app:${URL_PASSWORD}@db.internal/prod`, 2),
    ]);
    // A key that starts 13 characters before the indexed length ends.
    const long = `${'a'.repeat(SEARCH_INDEX_MAX_CHARS - 20)} crane ${API_KEY} tail`;
    await h.store.appendMessages('agent:main:subagent:c1', [
      { role: 'assistant', content: [{ type: 'text', text: long }], timestamp: T0 + 3 },
    ]);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('answers a query holding a configured secret, or a word of one, as a query that matches nothing', async () => {
    const nothing = await search('quokkaword');
    expect(nothing).toEqual({ count: 0, hits: [], redacted: false });
    for (const query of [CONFIGURED, CONFIGURED.toLowerCase(), '8841', 'my pin', `x${CONFIGURED}x`]) {
      expect(await search(query)).toEqual(nothing);
    }
    // The message is still found by its other words, with the secret redacted from the snippet.
    const found = await search('keep');
    expect(found.count).toBe(1);
    expect(found.redacted).toBe(true);
    expect(JSON.stringify(found)).not.toMatch(/8841|zq-bank/i);
  });

  it('finds nothing for a guessed API key or password in a URL: the index never held them', async () => {
    for (const query of [API_KEY, API_KEY.slice(8), URL_PASSWORD, `app:${URL_PASSWORD}`]) {
      expect((await search(query)).count).toBe(0);
    }
    expect((await search('deploy today')).count).toBe(1);
    expect((await search('db.internal prod')).count).toBe(1);
  });

  it('redacts a secret crossing the indexed length before cutting the snippet', async () => {
    const found = await search('crane');
    expect(found.count).toBe(1);
    expect(found.hits[0]?.snippet).toContain('crane [REDACTED]');
    expect(JSON.stringify(found)).not.toMatch(/sk-proj|4f9A8/);
    expect(found.redacted).toBe(true);
    expect((await search('4f9A8')).count).toBe(0);
  });
});
