import type { ModelRequest } from '@colloquy/core/model';
import type { Store, StoreTransaction } from '@colloquy/core/store';
import { afterEach, describe, expect, it } from 'vitest';
import {
  call,
  isSubagent,
  MAIN,
  type SubagentHarness,
  seedMain,
  startSubagentHarness,
  userTexts,
} from './subagents/subagents-fixture.js';
import { makeStore, waitFor } from './support/harness.js';

const HOUR = 3_600_000;
const realDateNow = Date.now;
/** How far the wall clock (`Date.now`) is set from real time; timers and `performance.now()` are not. */
let wallOffset = 0;

/** Sets the process's wall clock by `ms`, as an operator or NTP would; real time keeps passing. */
function setWallClock(ms: number): void {
  wallOffset += ms;
  Date.now = () => realDateNow() + wallOffset;
}

let h: SubagentHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  wallOffset = 0;
  Date.now = realDateNow;
});

const wakeNotices = (request: ModelRequest) => userTexts(request).filter((t) => t.includes('You yielded'));

/** Main spawns a child that takes `childMs`, then yields with a 2 s timeout and answers when it wakes. */
const yieldingParent = (childMs: number) => (request: ModelRequest) => {
  if (isSubagent(request)) return { text: 'child result', delayMs: childMs };
  const tail = request.messages.at(-1);
  if (tail?.role === 'toolResult' && tail.toolName === 'sessions_spawn') {
    return { toolCalls: [{ name: 'sessions_yield', arguments: { timeoutSeconds: 2 } }] };
  }
  if (wakeNotices(request).length > 0) return `woke: ${wakeNotices(request).at(-1)}`;
  return { toolCalls: [{ name: 'sessions_spawn', arguments: { task: 'slow work' } }] };
};

/** Starts the yielding parent and resolves once it has yielded, with the monotonic time it did. */
async function yieldNow(harness: SubagentHarness): Promise<number> {
  await seedMain(harness.store);
  await harness.runtime.gateway.call('agent', { sessionKey: MAIN, message: 'Start the slow one' });
  await waitFor(
    async () => (await harness.store.getSession(MAIN))?.meta?.yield !== undefined,
    4000,
    'the parent to yield',
  );
  return performance.now();
}

/** The transcript's timestamps, in order. */
async function timestamps(store: Store, key: string): Promise<number[]> {
  const messages = await store.readTail(key, 100);
  return messages.map((message) => message.timestamp);
}

describe('a wall clock that jumps', () => {
  it('set an hour back: the yield still wakes at its timeout, and no stored time runs backward', async () => {
    h = await startSubagentHarness({ script: yieldingParent(8000) });
    const yieldedAt = await yieldNow(h);
    const before = await timestamps(h.store, MAIN);
    setWallClock(-HOUR);
    await waitFor(() => h!.channel.sent.length > 0, 5000, 'the timeout wake');
    const waited = performance.now() - yieldedAt;
    expect(waited).toBeGreaterThan(1500);
    expect(waited).toBeLessThan(3500);
    expect(h.channel.sent[0]!.text).toMatch(/the timeout of 2 s passed/);
    const after = await timestamps(h.store, MAIN);
    expect(after.length).toBeGreaterThan(before.length);
    expect(after).toEqual([...after].sort((a, b) => a - b));
    expect(after.at(-1)!).toBeGreaterThanOrEqual(before.at(-1)!);
  });

  it('set an hour forward: the yield does not wake before its timeout', async () => {
    h = await startSubagentHarness({ script: yieldingParent(8000) });
    const yieldedAt = await yieldNow(h);
    setWallClock(HOUR);
    await waitFor(() => h!.channel.sent.length > 0, 5000, 'the timeout wake');
    expect(performance.now() - yieldedAt).toBeGreaterThan(1500);
    expect(h.channel.sent[0]!.text).toMatch(/the timeout of 2 s passed/);
  });

  it('set an hour back after an announce failed: its retry is not put off by an hour', async () => {
    const { store, cleanup } = await makeStore('memory');
    let failed = false;
    // The requester's inbox refuses the first announce; once its retry time is stored, the wall
    // clock goes back an hour, so a clock that follows it would find the retry an hour away.
    const flaky = failFirstAnnounceThenJump(store, () => {
      failed = true;
      setWallClock(-HOUR);
    });
    h = await startSubagentHarness({
      store: flaky,
      script: (request) => {
        if (isSubagent(request)) return 'child result';
        if (userTexts(request).some((text) => text.includes('child result'))) return 'got it';
        return { toolCalls: [{ name: 'sessions_spawn', arguments: { task: 'quick work' } }] };
      },
    });
    await seedMain(h.store);
    await call((await h.tools(MAIN)).sessions_spawn, { task: 'quick work' });
    await waitFor(() => failed, 4000, 'the first announce to fail');
    const jumpedAt = performance.now();
    await waitFor(() => h!.channel.sent.some((m) => m.text === 'got it'), 4000, 'the retried announce');
    expect(performance.now() - jumpedAt).toBeLessThan(3000);
    await cleanup();
  });
});

/**
 * Wraps a store: the first announce put into an inbox fails, and `onRetryScheduled` runs once the
 * runtime has stored when to try it again.
 */
function failFirstAnnounceThenJump(store: Store, onRetryScheduled: () => void): Store {
  let refused = false;
  let jumped = false;
  const refuseOnce = (target: StoreTransaction): StoreTransaction =>
    new Proxy(target, {
      get(object, property, receiver) {
        if (property === 'putInbox') {
          return async (entry: Parameters<StoreTransaction['putInbox']>[0]) => {
            if (!refused && entry.id.startsWith('announce:')) {
              refused = true;
              throw new Error('the inbox is unavailable');
            }
            return object.putInbox(entry);
          };
        }
        const value = Reflect.get(object, property, receiver);
        return typeof value === 'function' ? value.bind(object) : value;
      },
    });
  return new Proxy(store, {
    get(object, property, receiver) {
      if (property === 'transaction') {
        return <T>(work: (tx: StoreTransaction) => Promise<T>) =>
          object.transaction((tx) => work(refuseOnce(tx)));
      }
      if (property === 'updateOutbox') {
        return async (...args: Parameters<Store['updateOutbox']>) => {
          const result = await object.updateOutbox(...args);
          if (refused && !jumped && args[2].nextAttemptAt !== undefined) {
            jumped = true;
            onRetryScheduled();
          }
          return result;
        };
      }
      const value = Reflect.get(object, property, receiver);
      return typeof value === 'function' ? value.bind(object) : value;
    },
  });
}
