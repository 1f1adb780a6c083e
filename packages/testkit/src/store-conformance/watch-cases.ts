import type { TranscriptMessage } from '@colloquy/core';
import { SESSION_CHANGE_WINDOW, type SessionWatch, type Store } from '@colloquy/core/store';
import { describe, expect, it } from 'vitest';
import { makeRunRecord, makeSessionRecord, T0 } from '../fakes/record-factories.js';
import { useFreshStore } from './fresh-store.js';
import type { StoreConformanceOptions } from './store-cases.js';

const say = (text: string): TranscriptMessage => ({ role: 'user', content: text, timestamp: T0 });

const watch = (watcherKey: string, targetKey: string, afterVersion: number, id = 'w1'): SessionWatch => ({
  watcherKey,
  targetKey,
  afterVersion,
  id,
  createdAt: T0,
});

/**
 * The Store conformance cases of watching: `stateVersion`, `readChanges` and watches, registered in
 * the current `describe` block with fresh-store hooks of their own.
 *
 * @param makeStore - returns a fresh, empty store for each test
 * @param options - cleanup after each test
 */
export function describeWatchCases(
  makeStore: () => Store | Promise<Store>,
  options: StoreConformanceOptions = {},
): void {
  let store!: Store;
  useFreshStore(makeStore, options, (fresh) => {
    store = fresh;
  });
  const current = (): Store => store;
  const version = async (key: string) => (await current().getSession(key))?.stateVersion ?? 0;

  describe('state versions and changes', () => {
    it('starts a new session at version 0 and ignores a stateVersion passed in', async () => {
      const store = current();
      await store.putSession(makeSessionRecord('k1', { stateVersion: 41 }));
      expect(await version('k1')).toBe(0);
      expect(await store.readChanges('k1', 0)).toEqual({
        fromVersion: 0,
        toVersion: 0,
        changes: { message: 0, status: 0, patch: 0 },
        truncated: false,
      });
      expect(await store.readChanges('missing', 0)).toBeUndefined();
    });

    it('grows by one per appended message, run start or end, and patch', async () => {
      const store = current();
      await store.putSession(makeSessionRecord('k1'));
      await store.appendMessages('k1', [say('a'), say('b')]);
      expect(await version('k1')).toBe(2);
      await store.createRun(makeRunRecord('r1', 'k1'));
      expect(await version('k1')).toBe(2);
      await store.updateRun('r1', { status: 'running' });
      await store.updateRun('r1', { reply: 'same status' });
      await store.updateRun('r1', { status: 'done' });
      expect(await version('k1')).toBe(4);
      const patched = await store.patchSession('k1', { label: 'x' });
      expect(patched.stateVersion).toBe(5);
      await store.appendMessages('k1', [say('c')]);
      expect(await store.readChanges('k1', 0)).toEqual({
        fromVersion: 0,
        toVersion: 6,
        changes: { message: 3, status: 2, patch: 1 },
        truncated: false,
      });
      expect((await store.readChanges('k1', 4))?.changes).toEqual({ message: 1, status: 0, patch: 1 });
      expect((await store.readChanges('k1', 6))?.changes).toEqual({ message: 0, status: 0, patch: 0 });
    });

    it('does not count bookkeeping writes or unchanged records as patches', async () => {
      const store = current();
      await store.putSession(makeSessionRecord('k1', { label: 'a' }));
      await store.patchSession('k1', { updatedAt: T0 + 5, status: 'running', meta: { yield: { id: 'y' } } });
      await store.patchSession('k1', { label: 'a' });
      const current1 = (await store.getSession('k1'))!;
      await store.putSession({ ...current1, updatedAt: T0 + 9 });
      expect(await version('k1')).toBe(0);
      await store.putSession({ ...current1, label: 'b', stateVersion: 0 });
      expect(await version('k1')).toBe(1);
      expect((await store.getSession('k1'))?.label).toBe('b');
    });

    it('counts a run created running or ended, and ignores runs of missing sessions', async () => {
      const store = current();
      await store.putSession(makeSessionRecord('k1'));
      await store.createRun(makeRunRecord('r1', 'k1', { status: 'running' }));
      await store.createRun(makeRunRecord('r2', 'gone', { status: 'running' }));
      await store.updateRun('r2', { status: 'done' });
      expect((await store.readChanges('k1', 0))?.changes).toEqual({ message: 0, status: 1, patch: 0 });
    });

    it('rolls a version back with the transaction that made it', async () => {
      const store = current();
      await store.putSession(makeSessionRecord('k1'));
      await store
        .transaction(async (tx) => {
          await tx.appendMessages('k1', [say('a')]);
          expect((await tx.getSession('k1'))?.stateVersion).toBe(1);
          throw new Error('undo');
        })
        .catch(() => undefined);
      expect(await version('k1')).toBe(0);
      expect((await store.readChanges('k1', 0))?.changes.message).toBe(0);
    });

    it('keeps a bounded window of changes and says when a version is older', async () => {
      const store = current();
      await store.putSession(makeSessionRecord('k1'));
      const total = SESSION_CHANGE_WINDOW + 70;
      await store.appendMessages(
        'k1',
        Array.from({ length: total }, (_, i) => say(`m${i}`)),
      );
      await store.patchSession('k1', { label: 'after' });
      const all = await store.readChanges('k1', 0);
      expect(all).toEqual({
        fromVersion: total + 1 - SESSION_CHANGE_WINDOW,
        toVersion: total + 1,
        changes: { message: SESSION_CHANGE_WINDOW - 1, status: 0, patch: 1 },
        truncated: true,
      });
      expect((await store.readChanges('k1', total - 2))?.changes).toEqual({
        message: 2,
        status: 0,
        patch: 1,
      });
      expect((await store.readChanges('k1', total + 50))?.fromVersion).toBe(total + 1);
    });

    it('starts again at 0 when a deleted session is stored again', async () => {
      const store = current();
      await store.putSession(makeSessionRecord('k1'));
      await store.appendMessages('k1', [say('a')]);
      await store.deleteSession('k1');
      await store.putSession(makeSessionRecord('k1'));
      expect(await version('k1')).toBe(0);
      expect((await store.readChanges('k1', 0))?.changes.message).toBe(0);
    });
  });

  describe('watches', () => {
    it('lists a watch as due only once its target changed after afterVersion', async () => {
      const store = current();
      await store.putSession(makeSessionRecord('a'));
      await store.putSession(makeSessionRecord('b'));
      await store.putWatch(watch('a', 'b', 0));
      expect(await store.listWatches({ due: true })).toEqual([]);
      expect(await store.listWatches({ watcherKey: 'a' })).toEqual([watch('a', 'b', 0)]);
      await store.appendMessages('b', [say('1')]);
      await store.appendMessages('b', [say('2')]);
      await store.patchSession('b', { label: 'l' });
      expect(await store.listWatches({ due: true })).toEqual([watch('a', 'b', 0)]);
      expect(await store.listWatches({ due: true, targetKey: 'a' })).toEqual([]);
      expect(await store.deleteWatch('a', 'b', 'w1')).toBe(true);
      expect(await store.deleteWatch('a', 'b', 'w1')).toBe(false);
      expect(await store.listWatches({ due: true })).toEqual([]);
    });

    it('keeps one watch per watcher and target, and deletes only the id it was given', async () => {
      const store = current();
      await store.putSession(makeSessionRecord('a'));
      await store.putSession(makeSessionRecord('b'));
      await store.putWatch(watch('a', 'b', 0, 'old'));
      await store.putWatch(watch('a', 'b', 3, 'new'));
      expect(await store.listWatches({ targetKey: 'b' })).toEqual([watch('a', 'b', 3, 'new')]);
      expect(await store.deleteWatch('a', 'b', 'old')).toBe(false);
      expect(await store.listWatches({ watcherKey: 'a' })).toHaveLength(1);
      expect(await store.deleteWatch('a', 'b')).toBe(true);
    });

    it('drops the watches a deleted session set or was the target of', async () => {
      const store = current();
      for (const key of ['a', 'b', 'c']) await store.putSession(makeSessionRecord(key));
      await store.putWatch(watch('a', 'b', 0));
      await store.putWatch(watch('c', 'a', 0));
      await store.putWatch(watch('c', 'b', 0));
      await store.deleteSession('a');
      expect(await store.listWatches()).toEqual([watch('c', 'b', 0)]);
      expect(await store.listWatches({ limit: 0 })).toEqual([]);
    });

    it('writes a watch and an inbox notice together, or neither', async () => {
      const store = current();
      await store.putSession(makeSessionRecord('a'));
      await store.putSession(makeSessionRecord('b'));
      await store.putWatch(watch('a', 'b', 0));
      await store.appendMessages('b', [say('1')]);
      await store
        .transaction(async (tx) => {
          await tx.putInbox({ sessionKey: 'a', id: 'watch:w1', message: say('b changed'), createdAt: T0 });
          await tx.deleteWatch('a', 'b', 'w1');
          throw new Error('crash');
        })
        .catch(() => undefined);
      expect(await store.listWatches({ due: true })).toHaveLength(1);
      expect(await store.listInbox('a')).toEqual([]);
    });
  });
}
