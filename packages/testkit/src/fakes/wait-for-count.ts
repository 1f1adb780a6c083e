import { ColloquyError } from '@colloquy/core';

/**
 * Resolves with `items` once it holds at least `count` entries, re-checked each time a waiter in
 * `waiters` is called; rejects with `TIMEOUT` (and `describe(items.length)` as the message) after
 * `timeoutMs`. Shared by the test doubles' `waitFor…` helpers.
 */
export function waitForCount<T>(
  items: readonly T[],
  count: number,
  timeoutMs: number,
  waiters: Set<() => void>,
  describe: (have: number) => string,
): Promise<readonly T[]> {
  if (items.length >= count) return Promise.resolve(items);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      waiters.delete(wake);
      reject(new ColloquyError('TIMEOUT', describe(items.length)));
    }, timeoutMs);
    const wake = () => {
      if (items.length < count) return;
      clearTimeout(timer);
      waiters.delete(wake);
      resolve(items);
    };
    waiters.add(wake);
  });
}
