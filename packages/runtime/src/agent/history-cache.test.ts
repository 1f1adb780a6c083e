import type { TranscriptMessage } from '@colloquy/core';
import { MemoryStore, type Store } from '@colloquy/core/store';
import { describe, expect, it } from 'vitest';
import { loadHistory } from './build-prompt.js';
import { createHistoryCache, estimateMessageBytes } from './history-cache.js';

const KEY = 'agent:main:main';
const user = (content: string): TranscriptMessage => ({ role: 'user', content, timestamp: 0 });

/** Stores the session the tests read, under `sessionId` (a new id is a reset session). */
function putMainSession(store: Store, sessionId: string): Promise<void> {
  return store.putSession({ key: KEY, sessionId, agentId: 'main', kind: 'main', createdAt: 0, updatedAt: 0 });
}

/** A MemoryStore that counts the messages its readTail returned. */
async function countingStore(): Promise<{ store: Store; read: () => number }> {
  const store = new MemoryStore();
  let read = 0;
  const readTail = store.readTail.bind(store);
  store.readTail = async (key, limit, options) => {
    const out = await readTail(key, limit, options);
    read += out.length;
    return out;
  };
  await putMainSession(store, 'sid-1');
  return { store, read: () => read };
}

const texts = (messages: { content: unknown }[]) => messages.map((m) => m.content);

describe('createHistoryCache', () => {
  it('returns what loadHistory returns, while reading only new messages on later turns', async () => {
    const { store, read } = await countingStore();
    await store.appendMessages(
      KEY,
      Array.from({ length: 500 }, (_, i) => user(`m${i}`)),
    );
    const cache = createHistoryCache({ probe: 8, pageSize: 64 });
    expect(texts(await cache.load(store, KEY, 'sid-1', 100_000))).toEqual(
      texts(await loadHistory(store, KEY, 100_000)),
    );
    for (let turn = 0; turn < 10; turn++) {
      await store.appendMessages(KEY, [user(`new${turn}`), user(`reply${turn}`)]);
      const before = read();
      const loaded = await cache.load(store, KEY, 'sid-1', 100_000);
      // The newest message held, to check the transcript still has it, and the two new ones.
      expect(read() - before).toBe(3);
      expect(texts(loaded)).toEqual(texts(await loadHistory(store, KEY, 100_000)));
    }
  });

  it('follows a shrinking and a growing budget', async () => {
    const { store } = await countingStore();
    await store.appendMessages(
      KEY,
      Array.from({ length: 100 }, (_, i) => user(`message ${String(i).padStart(3, '0')}`)),
    );
    const cache = createHistoryCache({ probe: 4, pageSize: 16 });
    for (const budget of [1000, 50, 400, 5, 10_000]) {
      expect(texts(await cache.load(store, KEY, 'sid-1', budget))).toEqual(
        texts(await loadHistory(store, KEY, budget)),
      );
    }
  });

  it('reads the tail again after a gap wider than the probe, or a new sessionId', async () => {
    const { store } = await countingStore();
    await store.appendMessages(KEY, [user('a'), user('b')]);
    const cache = createHistoryCache({ probe: 2 });
    await cache.load(store, KEY, 'sid-1', 10_000);
    await store.appendMessages(KEY, [user('c'), user('d'), user('e')]);
    expect(texts(await cache.load(store, KEY, 'sid-1', 10_000))).toEqual(['a', 'b', 'c', 'd', 'e']);
    await store.deleteSession(KEY);
    await putMainSession(store, 'sid-2');
    await store.appendMessages(KEY, [user('fresh')]);
    expect(texts(await cache.load(store, KEY, 'sid-2', 10_000))).toEqual(['fresh']);
  });

  it('reads the tail again when the transcript no longer has the newest message it held', async () => {
    const { store } = await countingStore();
    await store.appendMessages(KEY, [user('a'), user('b'), user('c')]);
    const cache = createHistoryCache({ probe: 4 });
    await cache.load(store, KEY, 'sid-1', 10_000);
    // Re-created under the same sessionId with a shorter transcript.
    await store.deleteSession(KEY);
    await putMainSession(store, 'sid-1');
    await store.appendMessages(KEY, [user('x'), user('y')]);
    expect(texts(await cache.load(store, KEY, 'sid-1', 10_000))).toEqual(['x', 'y']);
  });

  it('keeps at most maxMessages messages', async () => {
    const { store } = await countingStore();
    await store.appendMessages(
      KEY,
      Array.from({ length: 50 }, (_, i) => user(`m${i}`)),
    );
    const cache = createHistoryCache({ maxMessages: 10, pageSize: 8 });
    const loaded = await cache.load(store, KEY, 'sid-1', 1e9);
    expect(texts(loaded)).toEqual(Array.from({ length: 10 }, (_, i) => `m${40 + i}`));
  });
});

describe('createHistoryCache: the byte cap', () => {
  /** A store with `sessions` sessions of `perSession` messages of `chars` characters each. */
  async function bigStore(sessions: number, perSession: number, chars: number): Promise<Store> {
    const store = new MemoryStore();
    for (let s = 0; s < sessions; s++) {
      const key = `agent:main:memory:group:g${s}`;
      await store.putSession({
        key,
        sessionId: `sid-${s}`,
        agentId: 'main',
        kind: 'group',
        createdAt: 0,
        updatedAt: 0,
      });
      await store.appendMessages(
        key,
        Array.from({ length: perSession }, (_, i) => user(`${s}/${i} ${'x'.repeat(chars)}`)),
      );
    }
    return store;
  }
  const keyOf = (s: number) => `agent:main:memory:group:g${s}`;

  it('estimates a message at twice its UTF-16 length plus a fixed overhead, images by their data', () => {
    const text = estimateMessageBytes(user('x'.repeat(1000)));
    expect(text).toBeGreaterThanOrEqual(2000);
    expect(text).toBeLessThan(2300);
    const image = estimateMessageBytes({
      role: 'user',
      content: [{ type: 'image', mimeType: 'image/png', data: 'A'.repeat(50_000) }],
      timestamp: 0,
    });
    expect(image).toBeGreaterThan(100_000);
  });

  it('never holds more than maxBytes after any number of loads', async () => {
    const store = await bigStore(40, 30, 2000);
    const maxBytes = 300_000;
    const cache = createHistoryCache({ maxBytes });
    for (let round = 0; round < 3; round++) {
      for (let s = 0; s < 40; s++) {
        const loaded = await cache.load(
          store,
          keyOf((s * 7 + round) % 40),
          `sid-${(s * 7 + round) % 40}`,
          1e9,
        );
        expect(loaded.length).toBeGreaterThanOrEqual(30);
        expect(cache.bytes()).toBeLessThanOrEqual(maxBytes);
      }
      await store.appendMessages(keyOf(round), [user('one more')]);
    }
    expect(cache.bytes()).toBeGreaterThan(maxBytes / 2);
  });

  it('drops the least recently used session first', async () => {
    const store = await bigStore(4, 10, 1000);
    // Room for three sessions of ten ~2 KB messages, not four.
    const cache = createHistoryCache({ maxBytes: 3 * 10 * 2300 });
    for (const s of [0, 1, 2]) await cache.load(store, keyOf(s), `sid-${s}`, 1e9);
    expect(cache.size()).toBe(3);
    await cache.load(store, keyOf(0), 'sid-0', 1e9); // 0 is now the most recent; 1 the least.
    await cache.load(store, keyOf(3), 'sid-3', 1e9);
    expect(cache.size()).toBe(3);
    const reads: string[] = [];
    const readTail = store.readTail.bind(store);
    store.readTail = async (key, limit, options) => {
      reads.push(`${key.slice(-2)} ${limit}`);
      return readTail(key, limit, options);
    };
    for (const s of [0, 2, 3, 1]) await cache.load(store, keyOf(s), `sid-${s}`, 1e9);
    // Held sessions catch up with one probe read (16); the evicted one is read again by page (64).
    expect(reads).toEqual(['g0 16', 'g2 16', 'g3 16', 'g1 64']);
  });

  it('serves a session bigger than the cap in full, and keeps only its newest messages that fit', async () => {
    const store = await bigStore(1, 20, 5000);
    const cache = createHistoryCache({ maxBytes: 35_000 });
    const first = await cache.load(store, keyOf(0), 'sid-0', 1e9);
    expect(first).toHaveLength(20);
    expect(texts(first)).toEqual(texts(await loadHistory(store, keyOf(0), 1e9)));
    expect(cache.bytes()).toBeLessThanOrEqual(35_000);
    expect(cache.size()).toBe(1);
    await store.appendMessages(keyOf(0), [user('later')]);
    const second = await cache.load(store, keyOf(0), 'sid-0', 1e9);
    expect(texts(second)).toEqual(texts(await loadHistory(store, keyOf(0), 1e9)));

    const tiny = createHistoryCache({ maxBytes: 1000 });
    expect(await tiny.load(store, keyOf(0), 'sid-0', 1e9)).toHaveLength(21);
    expect(tiny.bytes()).toBeLessThanOrEqual(1000);
    const none = createHistoryCache({ maxBytes: 0 });
    expect(texts(await none.load(store, keyOf(0), 'sid-0', 1e9))).toEqual(texts(second));
    expect(none.size()).toBe(0);
    expect(none.bytes()).toBe(0);
  });
});
