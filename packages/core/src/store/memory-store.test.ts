import { describe, expect, it } from 'vitest';
import { makeSessionRecord } from '../testing/record-factories.js';
import { runStoreConformance } from '../testing/store-conformance.js';
import { MemoryStore } from './memory-store.js';

runStoreConformance('MemoryStore', () => new MemoryStore());

describe('MemoryStore', () => {
  it('refuses an async transaction function and rolls back what it wrote synchronously', () => {
    const store = new MemoryStore();
    expect(() =>
      store.transaction(() => {
        store.putSession(makeSessionRecord('k1'));
        return Promise.resolve(1);
      }),
    ).toThrow(/synchronous/);
    expect(store.getSession('k1')).toBeUndefined();
  });

  it('refuses every call after close', () => {
    const store = new MemoryStore();
    store.close();
    expect(() => store.getSession('k1')).toThrow(/closed/);
  });
});
