import { MemoryStore, type Store, type TranscriptMessage } from '@colloquy/core';
import { describe, expect, it } from 'vitest';
import { loadHistory } from './build-prompt.js';
import { createHistoryCache } from './history-cache.js';

const KEY = 'agent:main:main';
const user = (content: string): TranscriptMessage => ({ role: 'user', content, timestamp: 0 });

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
  await store.putSession({
    key: KEY,
    sessionId: 'sid-1',
    agentId: 'main',
    kind: 'main',
    createdAt: 0,
    updatedAt: 0,
  });
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
      expect(read() - before).toBe(8);
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
    await store.putSession({
      key: KEY,
      sessionId: 'sid-2',
      agentId: 'main',
      kind: 'main',
      createdAt: 0,
      updatedAt: 0,
    });
    await store.appendMessages(KEY, [user('fresh')]);
    expect(texts(await cache.load(store, KEY, 'sid-2', 10_000))).toEqual(['fresh']);
  });

  it('keeps at most maxSessions sessions and maxMessages messages', async () => {
    const { store } = await countingStore();
    await store.appendMessages(
      KEY,
      Array.from({ length: 50 }, (_, i) => user(`m${i}`)),
    );
    const cache = createHistoryCache({ maxSessions: 1, maxMessages: 10, pageSize: 8 });
    const loaded = await cache.load(store, KEY, 'sid-1', 1e9);
    expect(texts(loaded)).toEqual(Array.from({ length: 10 }, (_, i) => `m${40 + i}`));
    await store.putSession({
      key: 'other',
      sessionId: 'o',
      agentId: 'main',
      kind: 'other',
      createdAt: 0,
      updatedAt: 0,
    });
    await cache.load(store, 'other', 'o', 100);
    expect(cache.size()).toBe(1);
  });
});
