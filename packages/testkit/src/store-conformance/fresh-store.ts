import type { Store } from '@colloquy/core/store';
import { afterEach, beforeEach } from 'vitest';
import type { StoreConformanceOptions } from './store-cases.js';

/**
 * Registers, in the current `describe` block, hooks that give each test a fresh store and close it
 * (after `options.cleanup`) when the test ends.
 *
 * @param makeStore - returns a fresh, empty store
 * @param options - cleanup after each test
 * @param onStore - receives the store of the test about to run
 */
export function useFreshStore(
  makeStore: () => Store | Promise<Store>,
  options: StoreConformanceOptions,
  onStore: (store: Store) => void,
): void {
  let store: Store;
  beforeEach(async () => {
    store = await makeStore();
    onStore(store);
  });
  afterEach(async () => {
    await options.cleanup?.(store);
    await store.close();
  });
}
