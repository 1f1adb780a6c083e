import { ColloquyError } from '@colloquy/core';

/**
 * Resolves with `items` once `have()` (by default the number of items) reaches `count`, re-checked
 * each time a waiter in `waiters` is called; rejects with `TIMEOUT` (and `describe(have())` as the
 * message) after `timeoutMs`. Shared by the test doubles' `waitFor…` helpers.
 */
export function waitForCount<T>(
  items: readonly T[],
  count: number,
  timeoutMs: number,
  waiters: Set<() => void>,
  describe: (have: number) => string,
  have: () => number = () => items.length,
): Promise<readonly T[]> {
  if (have() >= count) return Promise.resolve(items);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      waiters.delete(wake);
      reject(new ColloquyError('TIMEOUT', describe(have())));
    }, timeoutMs);
    const wake = () => {
      if (have() < count) return;
      clearTimeout(timer);
      waiters.delete(wake);
      resolve(items);
    };
    waiters.add(wake);
  });
}
