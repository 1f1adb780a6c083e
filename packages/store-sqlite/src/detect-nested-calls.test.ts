import { makeSessionRecord } from '@colloquy/testkit';
import { describe, expect, it } from 'vitest';
import { openSqliteStore } from './open-sqlite-store.js';

describe('detectNestedCalls', () => {
  it('is on by default: a call on the store inside its own transaction rejects', async () => {
    const store = openSqliteStore({ file: ':memory:' });
    await expect(
      store.transaction(async (tx) => {
        await tx.putSession(makeSessionRecord('k1'));
        await store.getSession('k1');
      }),
    ).rejects.toMatchObject({ code: 'STORE_ERROR' });
    await store.close();
  });

  it('off, transactions stay isolated: a call from outside waits for the commit', async () => {
    const store = openSqliteStore({ file: ':memory:', detectNestedCalls: false, groupCommit: true });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const writing = store.transaction(async (tx) => {
      await tx.putSession(makeSessionRecord('k1', { label: 'inside' }));
      await gate;
      await tx.patchSession('k1', { label: 'committed' });
      return (await tx.getSession('k1'))?.label;
    });
    const outside = store.getSession('k1');
    release();
    expect(await writing).toBe('committed');
    expect((await outside)?.label).toBe('committed');
    await store.close();
  });
});
