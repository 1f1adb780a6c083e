import { ColloquyError } from '@colloquy/core';
import { MemoryStore, type Store, turnOperations } from '@colloquy/core/store';
import { afterEach, describe, expect, it } from 'vitest';
import { type Harness, startHarness, waitFor } from './support/harness.js';

const DM = 'agent:main:memory:dm:user-1';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** A memory store whose `endTurn` is refused `times` times with `error`, then taken. */
function refusingEnds(times: number, error: () => Error): { store: Store; refused: () => number } {
  const inner = new MemoryStore();
  const turns = turnOperations(inner);
  let refused = 0;
  const store = new Proxy(inner, {
    get(target, name, receiver) {
      if (name !== 'endTurn') return Reflect.get(target, name, receiver);
      return (end: Parameters<typeof turns.endTurn>[0]) => {
        if (refused < times) {
          refused++;
          return Promise.reject(error());
        }
        return turns.endTurn(end);
      };
    },
  });
  return { store, refused: () => refused };
}

const diskFull = () =>
  new ColloquyError('STORE_ERROR', 'The disk holding the database is full.', { reason: 'disk-full' });

describe('a store that refuses the end of a turn', () => {
  it('for a while (a full disk): stores the end once it takes writes again, and sends the answer', async () => {
    const { store, refused } = refusingEnds(2, diskFull);
    h = await startHarness({ script: ['the answer'], store });
    await h.channel.inject({ text: 'hello', sender: { id: 'user-1', name: 'Ada' } });
    await h.channel.waitForSent(1, 10_000);
    expect(refused()).toBe(2);
    expect(h.channel.textsTo('user-1')).toEqual(['the answer']);
    const [run] = await h.store.listRuns({ sessionKey: DM });
    expect(run).toMatchObject({ status: 'done', reply: 'the answer' });
    await waitFor(async () => (await h!.store.getSession(DM))?.status === 'done');
  });

  it('for good: answers with the apology at once, without waiting', async () => {
    const { store, refused } = refusingEnds(
      Number.POSITIVE_INFINITY,
      () => new ColloquyError('STORE_ERROR', 'The store is corrupt.', { sqliteCode: 'SQLITE_CORRUPT' }),
    );
    h = await startHarness({ script: ['the answer'], store });
    await h.channel.inject({ text: 'hello', sender: { id: 'user-1', name: 'Ada' } });
    await h.channel.waitForSent(1, 3_000);
    expect(refused()).toBe(1);
    const [apology, ...more] = h.channel.textsTo('user-1');
    expect(apology).toMatch(/^Sorry, I could not answer/);
    expect(more).toEqual([]);
  });
});
