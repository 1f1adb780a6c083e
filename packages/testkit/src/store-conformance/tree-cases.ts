import type { TranscriptMessage } from '@colloquy/core';
import { batchReads, type SessionListQuery, type Store } from '@colloquy/core/store';
import { describe, expect, it } from 'vitest';
import { makeRunRecord, makeSessionRecord, T0 } from '../fakes/record-factories.js';
import { useFreshStore } from './fresh-store.js';
import type { StoreConformanceOptions } from './store-cases.js';

const ROOT = 'agent:main:main';
const OTHER = 'agent:main:tg:group:1';
const A = 'agent:main:subagent:a';
const B = 'agent:main:subagent:b';

const say = (text: string): TranscriptMessage => ({ role: 'user', content: text, timestamp: T0 });

/**
 * The Store conformance cases of the reads behind a spawn-tree view: a level of the tree listed with
 * `spawnedBy` as a list, and the batched reads (`listRunsOfSessions`, `readTails`) through
 * `batchReads`, a store's own or core's default, which must answer exactly as one row-level read per
 * session does.
 *
 * @param makeStore - returns a fresh, empty store for each test
 * @param options - cleanup after each test
 */
export function describeTreeCases(
  makeStore: () => Store | Promise<Store>,
  options: StoreConformanceOptions = {},
): void {
  let store!: Store;
  useFreshStore(makeStore, options, (fresh) => {
    store = fresh;
  });

  describe('spawn trees: a level listed with spawnedBy as a list', () => {
    /** ROOT spawned A (live) and B (archived); OTHER spawned c1 and c2; A spawned a1. */
    const seed = async () => {
      await store.putSession(makeSessionRecord(ROOT, { kind: 'main' }));
      await store.putSession(makeSessionRecord(OTHER, { kind: 'group' }));
      const child = (key: string, spawnedBy: string, updatedAt: number, archived = false) =>
        store.putSession(
          makeSessionRecord(key, {
            kind: 'subagent',
            spawnedBy,
            updatedAt: T0 + updatedAt,
            ...(archived ? { archivedAt: T0 + updatedAt } : {}),
          }),
        );
      await child(A, ROOT, 40);
      await child(B, ROOT, 50, true);
      await child('agent:main:subagent:c1', OTHER, 30);
      await child('agent:main:subagent:c2', OTHER, 40);
      await child('agent:main:subagent:a1', A, 60);
    };
    const keys = async (query: SessionListQuery) => (await store.listSessions(query)).map((s) => s.key);

    it('lists the children of every spawner given, newest first, archived ones only when asked', async () => {
      await seed();
      expect(await keys({ spawnedBy: [ROOT, OTHER] })).toEqual([
        A,
        'agent:main:subagent:c2',
        'agent:main:subagent:c1',
      ]);
      expect(await keys({ spawnedBy: [OTHER, ROOT], includeArchived: true })).toEqual([
        B,
        A,
        'agent:main:subagent:c2',
        'agent:main:subagent:c1',
      ]);
      expect(await store.countSessions({ spawnedBy: [ROOT, OTHER] })).toBe(3);
      expect(await store.countSessions({ spawnedBy: [ROOT, OTHER], includeArchived: true })).toBe(4);
    });

    it('answers a list of one spawner as the key alone, and ignores repeats and unknown keys', async () => {
      await seed();
      expect(await keys({ spawnedBy: [A] })).toEqual(await keys({ spawnedBy: A }));
      expect(await keys({ spawnedBy: [A] })).toEqual(['agent:main:subagent:a1']);
      expect(await keys({ spawnedBy: [OTHER, 'missing', OTHER] })).toEqual([
        'agent:main:subagent:c2',
        'agent:main:subagent:c1',
      ]);
      expect(await store.countSessions({ spawnedBy: [OTHER, OTHER] })).toBe(2);
    });

    it('matches nothing with an empty list', async () => {
      await seed();
      expect(await store.listSessions({ spawnedBy: [] })).toEqual([]);
      expect(await store.countSessions({ spawnedBy: [] })).toBe(0);
    });

    it('combines the list with the other filters, limit and offset', async () => {
      await seed();
      const level = { spawnedBy: [ROOT, OTHER, A], includeArchived: true };
      expect(await keys({ ...level, limit: 2 })).toEqual(['agent:main:subagent:a1', B]);
      expect(await keys({ ...level, limit: 2, offset: 2 })).toEqual([A, 'agent:main:subagent:c2']);
      expect(await keys({ ...level, keys: [A, 'agent:main:subagent:c1', OTHER] })).toEqual([
        A,
        'agent:main:subagent:c1',
      ]);
      expect(await keys({ ...level, kinds: ['main'] })).toEqual([]);
      expect(await keys({ ...level, activeMinutes: 1, now: T0 + 60_045 })).toEqual([
        'agent:main:subagent:a1',
        B,
      ]);
    });
  });

  describe('batched reads: listRunsOfSessions and readTails', () => {
    const seedRuns = async () => {
      // Two runs created at the same moment: the tie goes as listRuns breaks it.
      await store.createRun(makeRunRecord('r1', A, { createdAt: T0 + 1 }));
      await store.createRun(makeRunRecord('r2', A, { createdAt: T0 + 3 }));
      await store.createRun(makeRunRecord('r3', A, { createdAt: T0 + 3 }));
      await store.createRun(makeRunRecord('r4', B, { createdAt: T0 + 2, status: 'done' }));
    };

    it('reads the newest runs of each session as listRuns does, one entry per key given', async () => {
      await seedRuns();
      const sessionKeys = [A, 'missing', B, A];
      for (const limit of [1, 2, 10]) {
        const batched = await batchReads(store).listRunsOfSessions(sessionKeys, limit);
        const oneByOne = await Promise.all(
          sessionKeys.map((sessionKey) => store.listRuns({ sessionKey, limit })),
        );
        expect(batched).toEqual(oneByOne);
      }
      const [ofA, missing] = await batchReads(store).listRunsOfSessions([A, 'missing'], 2);
      expect(ofA!.map((run) => run.runId)).toEqual(['r3', 'r2']);
      expect(missing).toEqual([]);
      expect(await batchReads(store).listRunsOfSessions([], 5)).toEqual([]);
    });

    it('reads the tail of each session as readTail does, one entry per key given', async () => {
      await store.putSession(makeSessionRecord(A));
      await store.putSession(makeSessionRecord(B));
      await store.appendMessages(
        A,
        Array.from({ length: 12 }, (_, i) => say(`a${i + 1}`)),
      );
      await store.appendMessages(B, [say('b1')]);
      await store.setMessagePlatformId(B, 1, 'platform-1');
      const sessionKeys = [B, A, 'missing', A];
      for (const limit of [1, 5, 50]) {
        const batched = await batchReads(store).readTails(sessionKeys, limit);
        const oneByOne = await Promise.all(
          sessionKeys.map((sessionKey) => store.readTail(sessionKey, limit)),
        );
        expect(batched).toEqual(oneByOne);
      }
      const [ofB, ofA, missing] = await batchReads(store).readTails([B, A, 'missing'], 3);
      expect(ofB).toEqual([
        expect.objectContaining({ seq: 1, content: 'b1', platformMessageId: 'platform-1' }),
      ]);
      expect(ofA!.map((m) => m.seq)).toEqual([10, 11, 12]);
      expect(missing).toEqual([]);
      expect(await batchReads(store).readTails([], 5)).toEqual([]);
    });

    it('reads inside a transaction, seeing its own writes', async () => {
      await store.putSession(makeSessionRecord(A));
      await store.transaction(async (tx) => {
        await tx.createRun(makeRunRecord('r1', A));
        await tx.appendMessages(A, [say('inside')]);
        const reads = batchReads(tx);
        expect((await reads.listRunsOfSessions([A], 5))[0]!.map((run) => run.runId)).toEqual(['r1']);
        expect((await reads.readTails([A], 5))[0]!.map((m) => m.content)).toEqual(['inside']);
      });
    });
  });
}
