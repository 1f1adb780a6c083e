import { type AgentTool, ColloquyError, toolResult } from '@colloquy/core';
import { MemoryStore, type Store, turnOperations } from '@colloquy/core/store';
import { Type } from '@sinclair/typebox';
import { afterEach, describe, expect, it } from 'vitest';
import { type Harness, startHarness, waitFor } from './support/harness.js';

const DM = 'agent:main:memory:dm:user-1';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** A memory store whose `method` is refused `times` times with `error`, then taken. */
function refusing(
  method: 'endTurn' | 'appendMessages',
  times: number,
  error: () => Error,
): { store: Store; refused: () => number } {
  const inner = new MemoryStore();
  const turns = turnOperations(inner);
  let refused = 0;
  const store = new Proxy(inner, {
    get(target, name, receiver) {
      if (name !== method) return Reflect.get(target, name, receiver);
      const take =
        method === 'endTurn'
          ? (...args: unknown[]) => turns.endTurn(...(args as Parameters<typeof turns.endTurn>))
          : (...args: unknown[]) =>
              inner.appendMessages(...(args as Parameters<typeof inner.appendMessages>));
      return (...args: unknown[]) => {
        if (refused < times) {
          refused++;
          return Promise.reject(error());
        }
        return take(...args);
      };
    },
  });
  return { store, refused: () => refused };
}

const refusingEnds = (times: number, error: () => Error) => refusing('endTurn', times, error);

const diskFull = () =>
  new ColloquyError('STORE_ERROR', 'The disk holding the database is full.', { reason: 'disk-full' });
const connectionLost = () =>
  new ColloquyError('STORE_ERROR', 'The connection to PostgreSQL was lost.', { retryable: true });

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

const echoTool: AgentTool = {
  name: 'echo',
  description: 'Echoes its text.',
  parameters: Type.Object({ text: Type.String() }),
  execute: async (_id, args) => toolResult({ status: 'ok', echoed: (args as { text: string }).text }),
};

describe('a store that refuses a step of a turn for a while (a database restarting)', () => {
  it('keeps the step, stores it once the store takes writes again, and sends the answer', async () => {
    const { store, refused } = refusing('appendMessages', 2, connectionLost);
    h = await startHarness({
      script: [
        { text: 'Let me echo.', toolCalls: [{ id: 'c1', name: 'echo', arguments: { text: 'ping' } }] },
        'Echoed.',
      ],
      tools: () => [echoTool],
      store,
    });
    await h.channel.inject({ text: 'hello', sender: { id: 'user-1', name: 'Ada' } });
    await h.channel.waitForSent(1, 10_000);
    expect(refused()).toBe(2);
    expect(h.channel.textsTo('user-1')).toEqual(['Echoed.']);
    const [run] = await h.store.listRuns({ sessionKey: DM });
    expect(run).toMatchObject({ status: 'done', reply: 'Echoed.' });
    const history = await h.store.readTail(DM, 50);
    expect(history.map((message) => message.role)).toEqual(['user', 'assistant', 'toolResult', 'assistant']);
  });
});
