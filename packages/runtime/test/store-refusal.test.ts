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
  method: 'endTurn' | 'appendMessages' | 'recordDeliveries',
  times: number,
  error: () => Error,
): { store: Store; refused: () => number; taken: () => number } {
  const inner = new MemoryStore();
  const turns = turnOperations(inner);
  let refused = 0;
  let taken = 0;
  const store = new Proxy(inner, {
    get(target, name, receiver) {
      if (name !== method) return Reflect.get(target, name, receiver);
      const take =
        method === 'endTurn'
          ? (...args: unknown[]) => turns.endTurn(...(args as Parameters<typeof turns.endTurn>))
          : method === 'recordDeliveries'
            ? (...args: unknown[]) =>
                turns.recordDeliveries(...(args as Parameters<typeof turns.recordDeliveries>))
            : (...args: unknown[]) =>
                inner.appendMessages(...(args as Parameters<typeof inner.appendMessages>));
      return async (...args: unknown[]) => {
        if (refused < times) {
          refused++;
          throw error();
        }
        const result = await take(...args);
        taken++;
        return result;
      };
    },
  });
  return { store, refused: () => refused, taken: () => taken };
}

const refusingEnds = (times: number, error: () => Error) => refusing('endTurn', times, error);

const diskFull = () =>
  new ColloquyError('STORE_ERROR', 'The disk holding the database is full.', { reason: 'disk-full' });
const connectionLost = () =>
  new ColloquyError('STORE_ERROR', 'The connection to PostgreSQL was lost.', { retryable: true });
const refusingRecords = (times: number) => refusing('recordDeliveries', times, connectionLost);

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

describe('a store that refuses the record of a sent reply', () => {
  it('twice, just before shutdown: the reply is recorded delivered before the store closes', async () => {
    const { store, refused, taken } = refusingRecords(2);
    h = await startHarness({ script: ['the answer'], store });
    await h.channel.inject({ text: 'hello', sender: { id: 'user-1', name: 'Ada' } });
    await h.channel.waitForSent(1, 10_000);
    await waitFor(() => refused() === 1);
    // The recorder pauses 0.25 s, then 0.5 s, before it tries again: longer than the 0.25 s a
    // shutdown without a drain budget gives the turns' own work.
    await h.runtime.shutdown({ drainMs: 0 });
    expect(refused()).toBe(2);
    expect(taken()).toBe(1);
  });

  it('for good: shutdown ends the retries, so no pause holds the process after it', async () => {
    const { store, refused } = refusingRecords(Number.POSITIVE_INFINITY);
    h = await startHarness({ script: ['the answer'], store });
    await h.channel.inject({ text: 'hello', sender: { id: 'user-1', name: 'Ada' } });
    await h.channel.waitForSent(1, 10_000);
    await waitFor(() => refused() >= 3, 10_000);
    await h.runtime.shutdown({ drainMs: 500 });
    const after = refused();
    // The recorder's pauses had reached 2 s and more: a try after this one would show here.
    await new Promise((resolve) => setTimeout(resolve, 4500));
    expect(refused()).toBe(after);
  }, 30_000);
});
