import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isColloquyError } from '../errors/colloquy-error.js';
import type { InboxEntry, OutboxEntry, ThreadBinding, TranscriptMessage } from '../interfaces/records.js';
import type { Store } from '../interfaces/store.js';
import { makeRunRecord, makeSessionRecord, T0 } from './record-factories.js';

/** Options of {@link runStoreConformance}. */
export interface StoreConformanceOptions {
  /** Called after each test with the store it used (close files, remove temp dirs). */
  cleanup?: (store: Store) => void | Promise<void>;
}

const userMessage = (text: string, timestamp = T0): TranscriptMessage => ({
  role: 'user',
  content: text,
  timestamp,
});

function expectCode(fn: () => unknown, code: string): void {
  let thrown: unknown;
  try {
    fn();
  } catch (error) {
    thrown = error;
  }
  expect(isColloquyError(thrown), `expected a ColloquyError ${code}, got ${String(thrown)}`).toBe(true);
  expect((thrown as { code: string }).code).toBe(code);
}

/**
 * The Store conformance suite: every Store implementation runs it unchanged, inside vitest.
 *
 * @param name - a label for the describe block
 * @param makeStore - returns a fresh, empty store for each test
 * @example
 * ```ts
 * import { runStoreConformance } from '@colloquy/core/testing';
 * runStoreConformance('SqliteStore', () => openSqliteStore({ file: tempFile() }));
 * ```
 */
export function runStoreConformance(
  name: string,
  makeStore: () => Store | Promise<Store>,
  options: StoreConformanceOptions = {},
): void {
  describe(`Store conformance: ${name}`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await makeStore();
    });
    afterEach(async () => {
      await options.cleanup?.(store);
      store.close();
    });

    describe('sessions', () => {
      it('stores a session and finds it by key and by sessionId', () => {
        const record = makeSessionRecord('agent:main:main', {
          kind: 'main',
          label: 'home',
          deliveryContext: { channel: 'telegram', to: '42', accountId: 'default', threadId: '7' },
          usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 },
          meta: { nested: { a: [1, 2] } },
        });
        store.putSession(record);
        expect(store.getSession('agent:main:main')).toEqual(record);
        expect(store.getSessionById(record.sessionId)).toEqual(record);
        expect(store.getSession('agent:main:other')).toBeUndefined();
        expect(store.getSessionById('nope')).toBeUndefined();
      });

      it('returns copies, so changing a result does not change the store', () => {
        store.putSession(makeSessionRecord('agent:main:main', { meta: { a: 1 } }));
        const read = store.getSession('agent:main:main')!;
        read.label = 'changed';
        (read.meta as Record<string, unknown>).a = 2;
        expect(store.getSession('agent:main:main')?.label).toBeUndefined();
        expect(store.getSession('agent:main:main')?.meta).toEqual({ a: 1 });
      });

      it('replaces a whole record on put and re-indexes a changed sessionId', () => {
        store.putSession(makeSessionRecord('k1', { sessionId: 'old', label: 'x' }));
        store.putSession(makeSessionRecord('k1', { sessionId: 'new' }));
        expect(store.getSession('k1')?.label).toBeUndefined();
        expect(store.getSessionById('old')).toBeUndefined();
        expect(store.getSessionById('new')?.key).toBe('k1');
      });

      it('refuses a sessionId that already belongs to another session', () => {
        store.putSession(makeSessionRecord('k1', { sessionId: 'shared' }));
        store.putSession(makeSessionRecord('k2', { sessionId: 'other' }));
        expectCode(() => store.putSession(makeSessionRecord('k3', { sessionId: 'shared' })), 'CONFLICT');
        expectCode(() => store.patchSession('k2', { sessionId: 'shared' }), 'CONFLICT');
        expect(store.getSessionById('shared')?.key).toBe('k1');
        expect(store.getSession('k3')).toBeUndefined();
      });

      it('patches fields, clears fields given null, and refuses unknown sessions', () => {
        store.putSession(makeSessionRecord('k1', { label: 'a', model: 'p/m' }));
        const patched = store.patchSession('k1', { label: 'b', model: null, sendPolicy: 'deny' });
        expect(patched.label).toBe('b');
        expect(patched.model).toBeUndefined();
        expect(patched.sendPolicy).toBe('deny');
        expect(store.getSession('k1')).toEqual(patched);
        expectCode(() => store.patchSession('missing', { label: 'x' }), 'SESSION_NOT_FOUND');
      });

      it('finds sessions by label, optionally within one agent', () => {
        store.putSession(makeSessionRecord('agent:a:x', { label: 'ops', updatedAt: T0 + 1 }));
        store.putSession(makeSessionRecord('agent:b:y', { label: 'ops', updatedAt: T0 + 2 }));
        store.putSession(makeSessionRecord('agent:a:z', { label: 'dev' }));
        expect(store.findSessionsByLabel('ops').map((s) => s.key)).toEqual(['agent:b:y', 'agent:a:x']);
        expect(store.findSessionsByLabel('ops', 'a').map((s) => s.key)).toEqual(['agent:a:x']);
        expect(store.findSessionsByLabel('none')).toEqual([]);
      });

      it('deletes a session with its transcript, inbox and thread bindings, but keeps runs', () => {
        store.putSession(makeSessionRecord('k1'));
        store.appendMessages('k1', [userMessage('hi')]);
        store.putInbox({ sessionKey: 'k1', id: 'i1', message: userMessage('x'), createdAt: T0 });
        store.putThreadBinding(binding('k1', 't1'));
        store.createRun(makeRunRecord('r1', 'k1'));
        expect(store.deleteSession('k1')).toBe(true);
        expect(store.getSession('k1')).toBeUndefined();
        expect(store.getSessionById('sid-k1')).toBeUndefined();
        expect(store.readTail('k1', 10)).toEqual([]);
        expect(store.countMessages('k1')).toBe(0);
        expect(store.listInbox('k1')).toEqual([]);
        expect(store.getThreadBinding('telegram', 'default', 't1')).toBeUndefined();
        expect(store.getRun('r1')?.sessionKey).toBe('k1');
        expect(store.deleteSession('k1')).toBe(false);
      });

      it('a recreated session starts with an empty transcript', () => {
        store.putSession(makeSessionRecord('k1'));
        store.appendMessages('k1', [userMessage('old')]);
        store.deleteSession('k1');
        store.putSession(makeSessionRecord('k1'));
        expect(store.readTail('k1', 10)).toEqual([]);
        expect(store.appendMessages('k1', [userMessage('new')])[0]?.seq).toBeGreaterThan(0);
      });
    });

    describe('listing sessions', () => {
      const seed = () => {
        store.putSession(makeSessionRecord('agent:main:main', { kind: 'main', updatedAt: T0 + 50 * 60_000 }));
        store.putSession(
          makeSessionRecord('agent:main:tg:group:1', { kind: 'group', updatedAt: T0 + 40 * 60_000 }),
        );
        store.putSession(makeSessionRecord('cron:daily', { kind: 'cron', updatedAt: T0 + 10 * 60_000 }));
        store.putSession(
          makeSessionRecord('agent:main:subagent:a', {
            kind: 'subagent',
            spawnedBy: 'agent:main:main',
            updatedAt: T0 + 45 * 60_000,
          }),
        );
        store.putSession(
          makeSessionRecord('agent:main:subagent:b', {
            kind: 'subagent',
            spawnedBy: 'agent:main:main',
            updatedAt: T0 + 20 * 60_000,
            archivedAt: T0 + 30 * 60_000,
          }),
        );
        store.putSession(makeSessionRecord('agent:ops:main', { kind: 'main', updatedAt: T0 + 5 * 60_000 }));
      };
      const now = T0 + 60 * 60_000;

      it('sorts newest first and hides archived sessions unless asked', () => {
        seed();
        expect(store.listSessions({ now }).map((s) => s.key)).toEqual([
          'agent:main:main',
          'agent:main:subagent:a',
          'agent:main:tg:group:1',
          'cron:daily',
          'agent:ops:main',
        ]);
        expect(store.listSessions({ now, includeArchived: true })).toHaveLength(6);
      });

      it('breaks updatedAt ties by key', () => {
        store.putSession(makeSessionRecord('b'));
        store.putSession(makeSessionRecord('a'));
        store.putSession(makeSessionRecord('c'));
        expect(store.listSessions().map((s) => s.key)).toEqual(['a', 'b', 'c']);
      });

      it('filters by kinds, activeMinutes, spawnedBy, agentIds and keys, and combines them', () => {
        seed();
        expect(store.listSessions({ now, kinds: ['main'] }).map((s) => s.key)).toEqual([
          'agent:main:main',
          'agent:ops:main',
        ]);
        expect(store.listSessions({ now, activeMinutes: 20 }).map((s) => s.key)).toEqual([
          'agent:main:main',
          'agent:main:subagent:a',
          'agent:main:tg:group:1',
        ]);
        expect(store.listSessions({ now, spawnedBy: 'agent:main:main' }).map((s) => s.key)).toEqual([
          'agent:main:subagent:a',
        ]);
        expect(store.listSessions({ now, agentIds: ['ops'] }).map((s) => s.key)).toEqual(['agent:ops:main']);
        expect(store.listSessions({ now, keys: ['cron:daily', 'missing'] }).map((s) => s.key)).toEqual([
          'cron:daily',
        ]);
        expect(
          store
            .listSessions({ now, kinds: ['main', 'group'], activeMinutes: 30, agentIds: ['main'] })
            .map((s) => s.key),
        ).toEqual(['agent:main:main', 'agent:main:tg:group:1']);
        expect(store.listSessions({ now, kinds: [] })).toHaveLength(5);
      });

      it('applies limit after sorting, and counts ignoring limit', () => {
        seed();
        expect(store.listSessions({ now, limit: 2 }).map((s) => s.key)).toEqual([
          'agent:main:main',
          'agent:main:subagent:a',
        ]);
        expect(store.listSessions({ now, limit: 0 })).toEqual([]);
        expect(store.countSessions({ now, limit: 2 })).toBe(5);
        expect(store.countSessions({ now, kinds: ['subagent'], includeArchived: true })).toBe(2);
      });
    });

    describe('transcripts', () => {
      beforeEach(() => {
        store.putSession(makeSessionRecord('k1'));
        store.putSession(makeSessionRecord('k2'));
      });

      it('assigns increasing seq per session and keeps message shapes', () => {
        const rich: TranscriptMessage = {
          role: 'assistant',
          content: [
            { type: 'text', text: 'hi' },
            { type: 'toolCall', id: 'c1', name: 'sessions_list', arguments: { limit: 3 } },
            { type: 'image', mimeType: 'image/png', data: 'AAAA' },
          ],
          timestamp: T0,
          runId: 'r1',
          provenance: { kind: 'inter_session', sourceSessionKey: 'k2', sourceTool: 'sessions_send', hop: 1 },
          usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
        };
        const first = store.appendMessages('k1', [userMessage('a'), rich]);
        const second = store.appendMessages('k1', [userMessage('b')]);
        expect(first.map((m) => m.seq)).toEqual([1, 2]);
        expect(second[0]?.seq).toBe(3);
        expect(store.appendMessages('k2', [userMessage('other')])[0]?.seq).toBe(1);
        expect(store.readTail('k1', 10)[1]).toEqual({ ...rich, seq: 2 });
      });

      it('reads the tail in ascending order, with limit and beforeSeq', () => {
        for (let i = 1; i <= 30; i++) store.appendMessages('k1', [userMessage(`m${i}`, T0 + i)]);
        expect(store.readTail('k1', 3).map((m) => m.content)).toEqual(['m28', 'm29', 'm30']);
        expect(store.readTail('k1', 3, { beforeSeq: 10 }).map((m) => m.seq)).toEqual([7, 8, 9]);
        expect(store.readTail('k1', 100).length).toBe(30);
        expect(store.readTail('k1', 5, { beforeSeq: 3 }).map((m) => m.seq)).toEqual([1, 2]);
        expect(store.readTail('k1', 0)).toEqual([]);
        expect(store.readTail('missing', 5)).toEqual([]);
        expect(store.countMessages('k1')).toBe(30);
        expect(store.countMessages('k2')).toBe(0);
      });

      it('refuses to append to an unknown session', () => {
        expectCode(() => store.appendMessages('missing', [userMessage('x')]), 'SESSION_NOT_FOUND');
      });
    });

    describe('runs', () => {
      it('creates, reads, updates and lists runs newest first', () => {
        store.createRun(makeRunRecord('r1', 'k1', { createdAt: T0 + 1 }));
        store.createRun(makeRunRecord('r2', 'k1', { createdAt: T0 + 2, spawnedBy: 'p' }));
        store.createRun(makeRunRecord('r3', 'k2', { createdAt: T0 + 3 }));
        const updated = store.updateRun('r1', { status: 'done', reply: 'ok', endedAt: T0 + 9 });
        expect(updated).toMatchObject({ runId: 'r1', status: 'done', reply: 'ok', sessionKey: 'k1' });
        expect(store.getRun('r1')).toEqual(updated);
        expect(store.listRuns().map((r) => r.runId)).toEqual(['r3', 'r2', 'r1']);
        expect(store.listRuns({ sessionKey: 'k1' }).map((r) => r.runId)).toEqual(['r2', 'r1']);
        expect(store.listRuns({ statuses: ['done'] }).map((r) => r.runId)).toEqual(['r1']);
        expect(store.listRuns({ spawnedBy: 'p' }).map((r) => r.runId)).toEqual(['r2']);
        expect(store.listRuns({ limit: 1 }).map((r) => r.runId)).toEqual(['r3']);
      });

      it('refuses duplicate run ids and updates of unknown runs', () => {
        store.createRun(makeRunRecord('r1', 'k1'));
        expectCode(() => store.createRun(makeRunRecord('r1', 'k1')), 'CONFLICT');
        expectCode(() => store.updateRun('nope', { status: 'done' }), 'RUN_NOT_FOUND');
      });
    });

    describe('announce outbox', () => {
      const entry = (runId: string, overrides: Partial<OutboxEntry> = {}): OutboxEntry => ({
        childSessionKey: 'agent:main:subagent:c',
        runId,
        requesterSessionKey: 'agent:main:main',
        status: 'pending',
        payload: { text: `result ${runId}` },
        attempts: 0,
        nextAttemptAt: T0,
        createdAt: T0,
        updatedAt: T0,
        ...overrides,
      });

      it('inserts each (childSessionKey, runId) once', () => {
        expect(store.putOutbox(entry('r1'))).toBe(true);
        expect(store.putOutbox(entry('r1', { payload: { text: 'second' } }))).toBe(false);
        expect(store.getOutbox('agent:main:subagent:c', 'r1')?.payload).toEqual({ text: 'result r1' });
        expect(store.putOutbox(entry('r1', { childSessionKey: 'agent:main:subagent:d' }))).toBe(true);
      });

      it('updates entries and lists due ones oldest first by status and requester', () => {
        store.putOutbox(entry('r1', { createdAt: T0 + 2 }));
        store.putOutbox(entry('r2', { createdAt: T0 + 1, nextAttemptAt: T0 + 1000 }));
        store.putOutbox(entry('r3', { createdAt: T0 + 3, requesterSessionKey: 'other' }));
        const updated = store.updateOutbox('agent:main:subagent:c', 'r3', {
          status: 'delivered',
          platformMessageId: 'm1',
          deliveredAt: T0 + 5,
        });
        expect(updated).toMatchObject({ status: 'delivered', platformMessageId: 'm1', runId: 'r3' });
        expect(store.listOutbox().map((e) => e.runId)).toEqual(['r2', 'r1']);
        expect(store.listOutbox({ dueBefore: T0 + 10 }).map((e) => e.runId)).toEqual(['r1']);
        expect(store.listOutbox({ statuses: ['delivered'] }).map((e) => e.runId)).toEqual(['r3']);
        expect(
          store
            .listOutbox({ statuses: ['pending', 'delivered'], requesterSessionKey: 'other' })
            .map((e) => e.runId),
        ).toEqual(['r3']);
        expect(store.listOutbox({ limit: 1 }).map((e) => e.runId)).toEqual(['r2']);
        expectCode(() => store.updateOutbox('x', 'y', { status: 'delivered' }), 'STORE_ERROR');
      });
    });

    describe('session inbox', () => {
      const inbox = (id: string, createdAt: number): InboxEntry => ({
        sessionKey: 'k1',
        id,
        message: userMessage(id, createdAt),
        createdAt,
      });

      it('inserts or ignores by id, lists unconsumed oldest first, and consumes', () => {
        expect(store.putInbox(inbox('b', T0 + 2))).toBe(true);
        expect(store.putInbox(inbox('a', T0 + 1))).toBe(true);
        expect(store.putInbox(inbox('a', T0 + 5))).toBe(false);
        expect(store.listInbox('k1').map((e) => e.id)).toEqual(['a', 'b']);
        store.consumeInbox('k1', ['a'], T0 + 9);
        expect(store.listInbox('k1').map((e) => e.id)).toEqual(['b']);
        expect(store.putInbox(inbox('a', T0 + 10))).toBe(false);
        expect(store.listInbox('other')).toEqual([]);
      });
    });

    describe('thread bindings', () => {
      it('puts, replaces, reads, lists and deletes bindings', () => {
        store.putThreadBinding(binding('k1', 't1'));
        store.putThreadBinding(binding('k2', 't2', 'discord'));
        store.putThreadBinding({ ...binding('k3', 't1'), lastActiveAt: T0 + 5 });
        expect(store.getThreadBinding('telegram', 'default', 't1')).toMatchObject({ sessionKey: 'k3' });
        expect(store.listThreadBindings().length).toBe(2);
        expect(store.listThreadBindings({ channel: 'discord' }).map((b) => b.sessionKey)).toEqual(['k2']);
        expect(store.listThreadBindings({ sessionKey: 'k3' }).map((b) => b.threadId)).toEqual(['t1']);
        expect(store.deleteThreadBinding('telegram', 'default', 't1')).toBe(true);
        expect(store.deleteThreadBinding('telegram', 'default', 't1')).toBe(false);
        expect(store.getThreadBinding('telegram', 'default', 't1')).toBeUndefined();
      });
    });

    describe('transactions', () => {
      it('commits every write together', () => {
        store.transaction(() => {
          store.putSession(makeSessionRecord('k1'));
          store.appendMessages('k1', [userMessage('first')]);
          store.createRun(makeRunRecord('r1', 'k1'));
        });
        expect(store.getSession('k1')).toBeDefined();
        expect(store.countMessages('k1')).toBe(1);
        expect(store.getRun('r1')).toBeDefined();
      });

      it('rolls back every kind of write when the function throws, and rethrows', () => {
        store.putSession(makeSessionRecord('k1', { label: 'before' }));
        store.appendMessages('k1', [userMessage('kept')]);
        store.createRun(makeRunRecord('r0', 'k1'));
        const boom = new Error('boom');
        expect(() =>
          store.transaction(() => {
            store.putSession(makeSessionRecord('k2'));
            store.patchSession('k1', { label: 'after' });
            store.appendMessages('k1', [userMessage('lost')]);
            store.createRun(makeRunRecord('r1', 'k1'));
            store.updateRun('r0', { status: 'done' });
            store.putOutbox({
              childSessionKey: 'k1',
              runId: 'r1',
              requesterSessionKey: 'k2',
              status: 'pending',
              payload: {},
              attempts: 0,
              nextAttemptAt: T0,
              createdAt: T0,
              updatedAt: T0,
            });
            store.putInbox({ sessionKey: 'k1', id: 'i', message: userMessage('i'), createdAt: T0 });
            store.putThreadBinding(binding('k1', 't9'));
            throw boom;
          }),
        ).toThrow(boom);
        expect(store.getSession('k2')).toBeUndefined();
        expect(store.getSession('k1')?.label).toBe('before');
        expect(store.readTail('k1', 10).map((m) => m.content)).toEqual(['kept']);
        expect(store.getRun('r1')).toBeUndefined();
        expect(store.getRun('r0')?.status).toBe('queued');
        expect(store.getOutbox('k1', 'r1')).toBeUndefined();
        expect(store.listInbox('k1')).toEqual([]);
        expect(store.getThreadBinding('telegram', 'default', 't9')).toBeUndefined();
        expect(store.appendMessages('k1', [userMessage('next')])[0]?.seq).toBe(2);
      });

      it('rolls back a delete', () => {
        store.putSession(makeSessionRecord('k1'));
        store.appendMessages('k1', [userMessage('a')]);
        expect(() =>
          store.transaction(() => {
            store.deleteSession('k1');
            throw new Error('undo');
          }),
        ).toThrow('undo');
        expect(store.getSessionById('sid-k1')?.key).toBe('k1');
        expect(store.countMessages('k1')).toBe(1);
      });

      it('joins nested transactions to the outer one', () => {
        expect(() =>
          store.transaction(() => {
            store.transaction(() => store.putSession(makeSessionRecord('inner')));
            throw new Error('outer fails');
          }),
        ).toThrow('outer fails');
        expect(store.getSession('inner')).toBeUndefined();
        const value = store.transaction(() => store.transaction(() => 42));
        expect(value).toBe(42);
      });
    });
  });
}

function binding(sessionKey: string, threadId: string, channel = 'telegram'): ThreadBinding {
  return {
    channel,
    accountId: 'default',
    conversationId: '-100',
    threadId,
    sessionKey,
    createdAt: T0,
    lastActiveAt: T0,
  };
}
