import type { TranscriptMessage } from '@colloquy/core';
import { SEARCH_INDEX_MAX_CHARS, type Store } from '@colloquy/core/store';
import { describe, expect, it } from 'vitest';
import { makeSessionRecord, T0 } from '../fakes/record-factories.js';
import { useFreshStore } from './fresh-store.js';
import type { StoreConformanceOptions } from './store-cases.js';

const say = (text: string): TranscriptMessage => ({ role: 'user', content: text, timestamp: T0 });

/** A message text, the queries that must find it, and the queries that must not. */
interface WordCase {
  text: string;
  found: readonly string[];
  missed?: readonly string[];
}

const LONG_WORD = 'b'.repeat(3000);

/**
 * How text splits into words, the same on every store (the rule is `searchWords` in core): each
 * case's text is a message of its own session, and each query is searched within that session.
 */
const WORD_CASES: readonly WordCase[] = [
  { text: 'see example.com for details', found: ['example.com', 'example', 'com'] },
  { text: 'see https://docs.example.org/guide?x=1#top', found: ['docs.example.org', 'guide', 'https'] },
  { text: 'write to bob@corp.io today', found: ['bob@corp.io', 'corp', 'bob'] },
  { text: 'installed under /usr/local/bin', found: ['/usr/local', 'local', 'bin'] },
  { text: 'pi is about 3.14159', found: ['3.14159', '14159'], missed: ['314159'] },
  { text: 'release v1.2.3 shipped', found: ['v1.2.3', 'v1'], missed: ['v123'] },
  { text: 'a snake_case_name here', found: ['snake_case_name', 'case'] },
  { text: 'rocket🚀launch done', found: ['launch', 'rocket', 'rocket launch'] },
  { text: 'zero\u200bwidth joined', found: ['width', 'zero'] },
  { text: 'non\u00a0breaking space', found: ['breaking', 'non'] },
  { text: 'Встреча в Москве', found: ['Москве', 'москве', 'МОСКВЕ'] },
  { text: 'ÉCOLE normale', found: ['ÉCOLE', 'école', 'École'], missed: ['ecole'] },
  { text: 'Über alles', found: ['Über', 'über', 'ÜBER'], missed: ['uber'] },
  { text: 'un café noir', found: ['cafe\u0301', 'CAFÉ'], missed: ['cafe'] },
  { text: 'नमस्ते दुनिया', found: ['नमस्ते', 'दुनिया'] },
  { text: '東京タワー visit', found: ['東京タワー'], missed: ['東京'] },
  { text: "don't STOP now", found: ["don't", 'stop'] },
  { text: 'order 00123 placed', found: ['00123'], missed: ['123'] },
  // A word longer than any index keeps is cut, in the message and in the query alike: it is found,
  // and a long query word is never dropped (which would leave only the other words to match).
  {
    text: `kiwi ${LONG_WORD} banana`,
    found: [LONG_WORD, `kiwi ${LONG_WORD}`],
    missed: [`kiwi ${'a'.repeat(3000)}`],
  },
];

// Fake credentials, assembled at run time so no scanner mistakes this file for a leak.
const API_KEY = ['sk-proj-', '4f9A8b7C6d5E4f3G2h1I0', 'jKlMnOpQrStUv'].join('');
const URL_PASSWORD = ['hunter', '99', 'pass'].join('');

/**
 * The Store conformance cases of transcript search words and of what is never indexed, registered
 * in the current `describe` block with fresh-store hooks of their own.
 *
 * @param makeStore - returns a fresh, empty store for each test
 * @param options - cleanup after each test
 */
export function describeSearchCases(
  makeStore: () => Store | Promise<Store>,
  options: StoreConformanceOptions = {},
): void {
  let store!: Store;
  useFreshStore(makeStore, options, (fresh) => {
    store = fresh;
  });
  const totalOf = async (text: string, keys?: string[]) =>
    (await store.searchMessages({ text, ...(keys ? { keys } : {}) })).total;

  describe('search words', () => {
    it('splits text into words by one rule: URLs, addresses, paths, numbers, scripts and case alike', async () => {
      for (const [i, { text }] of WORD_CASES.entries()) {
        await store.putSession(makeSessionRecord(`case:${i}`));
        await store.appendMessages(`case:${i}`, [say(text)]);
      }
      const wrong: string[] = [];
      for (const [i, { text, found, missed = [] }] of WORD_CASES.entries()) {
        for (const query of found) {
          if ((await totalOf(query, [`case:${i}`])) !== 1) wrong.push(`${query} should find ${text}`);
        }
        for (const query of missed) {
          if ((await totalOf(query, [`case:${i}`])) !== 0) wrong.push(`${query} should not find ${text}`);
        }
      }
      expect(wrong.map((line) => line.slice(0, 120))).toEqual([]);
    });

    it('indexes a message of as many words as the indexed length holds, one word repeated in most', async () => {
      await store.putSession(makeSessionRecord('k1'));
      await store.appendMessages('k1', [say(`${'a '.repeat(SEARCH_INDEX_MAX_CHARS / 2 - 1)}z`)]);
      expect(await totalOf('z')).toBe(1);
      expect(await totalOf('a z')).toBe(1);
    });

    it('indexes messages appended after the session holding the newest messages was deleted', async () => {
      await store.putSession(makeSessionRecord('k1'));
      await store.putSession(makeSessionRecord('k2'));
      await store.appendMessages('k1', [say('first words')]);
      await store.appendMessages('k2', [say('second words'), say('third words')]);
      expect(await totalOf('words')).toBe(3);
      await store.deleteSession('k2');
      await store.appendMessages('k1', [say('zebra one'), say('zebra two')]);
      expect(await totalOf('zebra')).toBe(2);
      await store.putSession(makeSessionRecord('k2'));
      await store.appendMessages('k2', [say('narwhal')]);
      expect(await totalOf('narwhal')).toBe(1);
      expect(await totalOf('words')).toBe(1);
    });
  });

  describe('what search never indexes', () => {
    it('redacts API keys and passwords in URLs before indexing, so a guess at one finds nothing', async () => {
      await store.putSession(makeSessionRecord('k1'));
      await store.appendMessages('k1', [
        say(`use ${API_KEY} for the deploy`),
        say(`connect to postgres://app:${URL_PASSWORD}@db.internal:5432/prod`),
      ]);
      expect(await totalOf(API_KEY)).toBe(0);
      expect(await totalOf(API_KEY.slice(8))).toBe(0);
      expect(await totalOf(URL_PASSWORD)).toBe(0);
      expect(await totalOf('deploy')).toBe(1);
      expect(await totalOf('db.internal prod')).toBe(1);
    });

    it('redacts a secret crossing the indexed length before cutting, so no part of it is indexed', async () => {
      await store.putSession(makeSessionRecord('k1'));
      // The key starts 13 characters before the cut: `sk-proj-4f9A8` would be indexed if cut first.
      const text = `${'a'.repeat(SEARCH_INDEX_MAX_CHARS - 20)} crane ${API_KEY} tail`;
      await store.appendMessages('k1', [
        { role: 'assistant', content: [{ type: 'text', text }], timestamp: T0 },
      ]);
      expect(await totalOf('crane')).toBe(1);
      expect(await totalOf('4f9A8')).toBe(0);
      expect(await totalOf('proj')).toBe(0);
    });
  });
}
