import type { SessionRecord, ThreadBinding, TranscriptMessage } from '@colloquy/core';
import { isColloquyError } from '@colloquy/core';
import type { PairingRecord } from '@colloquy/core/gateway';
import type {
  InboxEntry,
  OutboxEntry,
  SessionListQuery,
  Store,
  StoreTransaction,
} from '@colloquy/core/store';
import { beforeEach, describe, expect, it } from 'vitest';
import { makeRunRecord, makeSessionRecord, T0 } from '../fakes/record-factories.js';
import { useFreshStore } from './fresh-store.js';

/** Options of `runStoreConformance`. */
export interface StoreConformanceOptions {
  /** Called after each test with the store it used (close files, remove temp dirs). */
  cleanup?: (store: Store) => void | Promise<void>;
}

const userMessage = (text: string, timestamp = T0): TranscriptMessage => ({
  role: 'user',
  content: text,
  timestamp,
});

/** `{ a: { a: ... 'end' } }`, `depth` objects deep. */
function nestedValue(depth: number): unknown {
  let value: unknown = 'end';
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
}

/** How deep `nestedValue` nests, and what it holds at the bottom (read without recursion). */
function nestingOf(value: unknown): { depth: number; leaf: unknown } {
  let depth = 0;
  let inner = value;
  while (typeof inner === 'object' && inner !== null && 'a' in inner) {
    inner = inner.a;
    depth += 1;
  }
  return { depth, leaf: inner };
}

async function expectCode(pending: Promise<unknown>, code: string): Promise<void> {
  let thrown: unknown;
  try {
    await pending;
  } catch (error) {
    thrown = error;
  }
  expect(isColloquyError(thrown), `expected a ColloquyError ${code}, got ${String(thrown)}`).toBe(true);
  expect((thrown as { code: string }).code).toBe(code);
}

/**
 * The core Store cases (sessions, transcripts, runs, announce inbox/outbox, thread bindings, pairing,
 * transactions), registered in the current `describe` block with fresh-store hooks of their own.
 *
 * @param makeStore - returns a fresh, empty store for each test
 * @param options - cleanup after each test
 */
export function describeStoreCases(
  makeStore: () => Store | Promise<Store>,
  options: StoreConformanceOptions = {},
): void {
  let store!: Store;
  useFreshStore(makeStore, options, (fresh) => {
    store = fresh;
  });

  const sessionById = async (sessionId: string) =>
    (await store.listSessions({ sessionId, includeArchived: true }))[0];
  const labelled = (label: string) => store.listSessions({ label });

  describe('sessions', () => {
    it('stores a session and finds it by key and by sessionId', async () => {
      const record = makeSessionRecord('agent:main:main', {
        kind: 'main',
        label: 'home',
        deliveryContext: { channel: 'telegram', to: '42', accountId: 'default', threadId: '7' },
        usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 },
        meta: { nested: { a: [1, 2] } },
      });
      await store.putSession(record);
      expect(await store.getSession('agent:main:main')).toEqual(record);
      expect(await sessionById(record.sessionId)).toEqual(record);
      expect(await store.getSession('agent:main:other')).toBeUndefined();
      expect(await sessionById('nope')).toBeUndefined();
    });

    it('returns copies, so changing a result does not change the store', async () => {
      await store.putSession(makeSessionRecord('agent:main:main', { meta: { a: 1 } }));
      const read = (await store.getSession('agent:main:main'))!;
      read.label = 'changed';
      (read.meta as Record<string, unknown>).a = 2;
      expect((await store.getSession('agent:main:main'))?.label).toBeUndefined();
      expect((await store.getSession('agent:main:main'))?.meta).toEqual({ a: 1 });
    });

    it('replaces a whole record on put and re-indexes a changed sessionId', async () => {
      await store.putSession(makeSessionRecord('k1', { sessionId: 'old', label: 'x' }));
      await store.putSession(makeSessionRecord('k1', { sessionId: 'new' }));
      expect((await store.getSession('k1'))?.label).toBeUndefined();
      expect(await sessionById('old')).toBeUndefined();
      expect((await sessionById('new'))?.key).toBe('k1');
    });

    it('refuses a sessionId that already belongs to another session', async () => {
      await store.putSession(makeSessionRecord('k1', { sessionId: 'shared' }));
      await store.putSession(makeSessionRecord('k2', { sessionId: 'other' }));
      await expectCode(store.putSession(makeSessionRecord('k3', { sessionId: 'shared' })), 'CONFLICT');
      await expectCode(store.patchSession('k2', { sessionId: 'shared' }), 'CONFLICT');
      expect((await sessionById('shared'))?.key).toBe('k1');
      expect(await store.getSession('k3')).toBeUndefined();
    });

    it('patches fields, clears fields given null, and refuses unknown sessions', async () => {
      await store.putSession(makeSessionRecord('k1', { label: 'a', model: 'p/m' }));
      const patched = await store.patchSession('k1', { label: 'b', model: null, sendPolicy: 'deny' });
      expect(patched.label).toBe('b');
      expect(patched.model).toBeUndefined();
      expect(patched.sendPolicy).toBe('deny');
      expect(await store.getSession('k1')).toEqual(patched);
      await expectCode(store.patchSession('missing', { label: 'x' }), 'SESSION_NOT_FOUND');
    });

    it('puts, patches and reads a session whose display name holds a NUL character', async () => {
      const name = 'Ada\u0000Lovelace';
      await store.putSession(makeSessionRecord('k1', { displayName: name }));
      expect(await store.getSession('k1')).toMatchObject({ displayName: name });
      const patched = await store.patchSession('k1', { displayName: `${name}!`, model: 'm' });
      expect(await store.getSession('k1')).toEqual(patched);
      expect(patched).toMatchObject({ displayName: `${name}!`, model: 'm' });
    });

    it('finds sessions by label, optionally within one agent', async () => {
      await store.putSession(makeSessionRecord('agent:a:x', { label: 'ops', updatedAt: T0 + 1 }));
      await store.putSession(makeSessionRecord('agent:b:y', { label: 'ops', updatedAt: T0 + 2 }));
      await store.putSession(makeSessionRecord('agent:a:z', { label: 'dev' }));
      expect((await labelled('ops')).map((s) => s.key)).toEqual(['agent:b:y', 'agent:a:x']);
      expect((await store.listSessions({ label: 'ops', agentIds: ['a'] })).map((s) => s.key)).toEqual([
        'agent:a:x',
      ]);
      expect(await labelled('none')).toEqual([]);
    });

    it('deletes a session with its transcript, inbox and thread bindings, but keeps runs', async () => {
      await store.putSession(makeSessionRecord('k1'));
      await store.appendMessages('k1', [userMessage('hi')]);
      await store.putInbox({ sessionKey: 'k1', id: 'i1', message: userMessage('x'), createdAt: T0 });
      await store.putThreadBinding(binding('k1', 't1'));
      await store.createRun(makeRunRecord('r1', 'k1'));
      expect(await store.deleteSession('k1')).toBe(true);
      expect(await store.getSession('k1')).toBeUndefined();
      expect(await sessionById('sid-k1')).toBeUndefined();
      expect(await store.readTail('k1', 10)).toEqual([]);
      expect(await store.countMessages('k1')).toBe(0);
      expect(await store.listInbox('k1')).toEqual([]);
      expect(await store.getThreadBinding('telegram', 'default', 't1')).toBeUndefined();
      expect((await store.getRun('r1'))?.sessionKey).toBe('k1');
      expect(await store.deleteSession('k1')).toBe(false);
    });

    it('a recreated session starts with an empty transcript', async () => {
      await store.putSession(makeSessionRecord('k1'));
      await store.appendMessages('k1', [userMessage('old')]);
      await store.deleteSession('k1');
      await store.putSession(makeSessionRecord('k1'));
      expect(await store.readTail('k1', 10)).toEqual([]);
      expect((await store.appendMessages('k1', [userMessage('new')]))[0]?.seq).toBeGreaterThan(0);
    });
  });

  describe('listing sessions', () => {
    const seed = async () => {
      await store.putSession(
        makeSessionRecord('agent:main:main', { kind: 'main', updatedAt: T0 + 50 * 60_000 }),
      );
      await store.putSession(
        makeSessionRecord('agent:main:tg:group:1', { kind: 'group', updatedAt: T0 + 40 * 60_000 }),
      );
      await store.putSession(makeSessionRecord('cron:daily', { kind: 'cron', updatedAt: T0 + 10 * 60_000 }));
      await store.putSession(
        makeSessionRecord('agent:main:subagent:a', {
          kind: 'subagent',
          spawnedBy: 'agent:main:main',
          updatedAt: T0 + 45 * 60_000,
        }),
      );
      await store.putSession(
        makeSessionRecord('agent:main:subagent:b', {
          kind: 'subagent',
          spawnedBy: 'agent:main:main',
          updatedAt: T0 + 20 * 60_000,
          archivedAt: T0 + 30 * 60_000,
        }),
      );
      await store.putSession(
        makeSessionRecord('agent:ops:main', { kind: 'main', updatedAt: T0 + 5 * 60_000 }),
      );
    };
    const now = T0 + 60 * 60_000;

    it('sorts newest first and hides archived sessions unless asked', async () => {
      await seed();
      expect((await store.listSessions({ now })).map((s) => s.key)).toEqual([
        'agent:main:main',
        'agent:main:subagent:a',
        'agent:main:tg:group:1',
        'cron:daily',
        'agent:ops:main',
      ]);
      expect(await store.listSessions({ now, includeArchived: true })).toHaveLength(6);
    });

    it('breaks updatedAt ties by key', async () => {
      await store.putSession(makeSessionRecord('b'));
      await store.putSession(makeSessionRecord('a'));
      await store.putSession(makeSessionRecord('c'));
      expect((await store.listSessions()).map((s) => s.key)).toEqual(['a', 'b', 'c']);
    });

    it('filters by kinds, activeMinutes, spawnedBy, agentIds and keys, and combines them', async () => {
      await seed();
      expect((await store.listSessions({ now, kinds: ['main'] })).map((s) => s.key)).toEqual([
        'agent:main:main',
        'agent:ops:main',
      ]);
      expect((await store.listSessions({ now, activeMinutes: 20 })).map((s) => s.key)).toEqual([
        'agent:main:main',
        'agent:main:subagent:a',
        'agent:main:tg:group:1',
      ]);
      expect((await store.listSessions({ now, spawnedBy: 'agent:main:main' })).map((s) => s.key)).toEqual([
        'agent:main:subagent:a',
      ]);
      expect((await store.listSessions({ now, agentIds: ['ops'] })).map((s) => s.key)).toEqual([
        'agent:ops:main',
      ]);
      expect((await store.listSessions({ now, keys: ['cron:daily', 'missing'] })).map((s) => s.key)).toEqual([
        'cron:daily',
      ]);
      expect(
        (
          await store.listSessions({ now, kinds: ['main', 'group'], activeMinutes: 30, agentIds: ['main'] })
        ).map((s) => s.key),
      ).toEqual(['agent:main:main', 'agent:main:tg:group:1']);
      expect(await store.listSessions({ now, kinds: [] })).toHaveLength(5);
    });

    it('widens the scope of keys and agentIds by alsoKeys, the other filters still applied', async () => {
      await seed();
      const keys = async (query: Omit<SessionListQuery, 'now'>) =>
        (await store.listSessions({ now, ...query })).map((s) => s.key);
      const opsAndGroup = { agentIds: ['ops'], alsoKeys: ['agent:main:tg:group:1', 'missing'] };
      expect(await keys(opsAndGroup)).toEqual(['agent:main:tg:group:1', 'agent:ops:main']);
      expect(await store.countSessions({ now, ...opsAndGroup })).toBe(2);
      expect(await keys({ ...opsAndGroup, kinds: ['main'] })).toEqual(['agent:ops:main']);
      expect(await keys({ ...opsAndGroup, activeMinutes: 30 })).toEqual(['agent:main:tg:group:1']);
      expect(await keys({ agentIds: ['ops'], alsoKeys: ['agent:main:subagent:b'] })).toEqual([
        'agent:ops:main',
      ]);
      expect(
        await keys({ agentIds: ['ops'], alsoKeys: ['agent:main:subagent:b'], includeArchived: true }),
      ).toEqual(['agent:main:subagent:b', 'agent:ops:main']);
      // Beside keys: (keys AND agentIds) OR alsoKeys.
      expect(
        await keys({
          keys: ['cron:daily', 'agent:ops:main'],
          agentIds: ['ops'],
          alsoKeys: ['agent:main:main'],
        }),
      ).toEqual(['agent:main:main', 'agent:ops:main']);
      // An empty narrowing leaves alsoKeys alone; no narrowing leaves alsoKeys nothing to add.
      expect(await keys({ agentIds: [], alsoKeys: ['agent:ops:main'] })).toEqual(['agent:ops:main']);
      expect(await keys({ keys: [], alsoKeys: ['agent:ops:main'] })).toEqual(['agent:ops:main']);
      expect(await keys({ alsoKeys: ['agent:ops:main'] })).toHaveLength(5);
      expect(await keys({ agentIds: ['ops'], alsoKeys: [] })).toEqual(['agent:ops:main']);
      // Paging runs over the union, newest first.
      const union = { agentIds: ['ops'], alsoKeys: ['agent:main:main', 'agent:main:tg:group:1'] };
      expect(await keys({ ...union, offset: 1, limit: 1 })).toEqual(['agent:main:tg:group:1']);
      expect(await keys({ ...union, kinds: ['main', 'group'], offset: 2 })).toEqual(['agent:ops:main']);
    });

    it('lists only forked sessions with onlyForked, the other filters still applied', async () => {
      await seed();
      const fork = (key: string, minutes: number, extra: Partial<SessionRecord> = {}) =>
        store.putSession(
          makeSessionRecord(key, {
            kind: 'subagent',
            spawnedBy: 'agent:main:main',
            forked: true,
            updatedAt: T0 + minutes * 60_000,
            ...extra,
          }),
        );
      // A record holding a NUL character is listed like any other.
      await fork('agent:ops:subagent:f1', 15, { displayName: 'f\u0000one' });
      await fork('agent:main:subagent:f2', 25);
      await fork('agent:main:subagent:f3', 35, { archivedAt: T0 + 40 * 60_000 });
      const keys = async (query: Omit<SessionListQuery, 'now'>) =>
        (await store.listSessions({ now, ...query })).map((s) => s.key);
      expect(await keys({ onlyForked: true })).toEqual(['agent:main:subagent:f2', 'agent:ops:subagent:f1']);
      expect(await store.countSessions({ now, onlyForked: true })).toBe(2);
      expect(await keys({ onlyForked: true, includeArchived: true })).toEqual([
        'agent:main:subagent:f3',
        'agent:main:subagent:f2',
        'agent:ops:subagent:f1',
      ]);
      expect(await keys({ onlyForked: true, agentIds: ['main'] })).toEqual(['agent:main:subagent:f2']);
      expect(
        await keys({
          onlyForked: true,
          agentIds: ['main'],
          alsoKeys: ['agent:ops:subagent:f1', 'agent:ops:main'],
        }),
      ).toEqual(['agent:main:subagent:f2', 'agent:ops:subagent:f1']);
      expect(await keys({ onlyForked: true, spawnedBy: 'agent:main:main' })).toHaveLength(2);
      expect(await keys({ onlyForked: true, kinds: ['main'] })).toEqual([]);
      expect(await keys({ onlyForked: true, offset: 1, limit: 1 })).toEqual(['agent:ops:subagent:f1']);
      expect(await keys({ onlyForked: false })).toHaveLength(7);
      // A session written again without the flag leaves the list.
      await store.putSession(
        makeSessionRecord('agent:ops:subagent:f1', { kind: 'subagent', updatedAt: T0 + 15 * 60_000 }),
      );
      expect(await keys({ onlyForked: true })).toEqual(['agent:main:subagent:f2']);
    });

    it('applies limit after sorting, and counts ignoring limit', async () => {
      await seed();
      expect((await store.listSessions({ now, limit: 2 })).map((s) => s.key)).toEqual([
        'agent:main:main',
        'agent:main:subagent:a',
      ]);
      expect(await store.listSessions({ now, limit: 0 })).toEqual([]);
      expect(await store.countSessions({ now, limit: 2 })).toBe(5);
      expect(await store.countSessions({ now, kinds: ['subagent'], includeArchived: true })).toBe(2);
    });

    it('skips offset rows after sorting and before limit, with and without filters', async () => {
      await seed();
      expect((await store.listSessions({ now, offset: 1, limit: 2 })).map((s) => s.key)).toEqual([
        'agent:main:subagent:a',
        'agent:main:tg:group:1',
      ]);
      expect((await store.listSessions({ now, offset: 3 })).map((s) => s.key)).toEqual([
        'cron:daily',
        'agent:ops:main',
      ]);
      expect(
        (await store.listSessions({ now, kinds: ['main', 'cron'], offset: 1, limit: 1 })).map((s) => s.key),
      ).toEqual(['cron:daily']);
      expect(
        (await store.listSessions({ now, keys: ['cron:daily', 'agent:main:main'], offset: 1 })).map(
          (s) => s.key,
        ),
      ).toEqual(['cron:daily']);
      expect(await store.listSessions({ now, offset: 5 })).toEqual([]);
      expect(await store.countSessions({ now, offset: 3 })).toBe(5);
    });
  });

  describe('transcripts', () => {
    beforeEach(async () => {
      await store.putSession(makeSessionRecord('k1'));
      await store.putSession(makeSessionRecord('k2'));
    });

    it('assigns increasing seq per session and keeps message shapes', async () => {
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
      const first = await store.appendMessages('k1', [userMessage('a'), rich]);
      const second = await store.appendMessages('k1', [userMessage('b')]);
      expect(first.map((m) => m.seq)).toEqual([1, 2]);
      expect(second[0]?.seq).toBe(3);
      expect((await store.appendMessages('k2', [userMessage('other')]))[0]?.seq).toBe(1);
      expect((await store.readTail('k1', 10))[1]).toEqual({ ...rich, seq: 2 });
    });

    it('reads the tail in ascending order, with limit and beforeSeq', async () => {
      for (let i = 1; i <= 30; i++) await store.appendMessages('k1', [userMessage(`m${i}`, T0 + i)]);
      expect((await store.readTail('k1', 3)).map((m) => m.content)).toEqual(['m28', 'm29', 'm30']);
      expect((await store.readTail('k1', 3, { beforeSeq: 10 })).map((m) => m.seq)).toEqual([7, 8, 9]);
      expect((await store.readTail('k1', 100)).length).toBe(30);
      expect((await store.readTail('k1', 5, { beforeSeq: 3 })).map((m) => m.seq)).toEqual([1, 2]);
      expect(await store.readTail('k1', 0)).toEqual([]);
      expect(await store.readTail('missing', 5)).toEqual([]);
      expect(await store.countMessages('k1')).toBe(30);
      expect(await store.countMessages('k2')).toBe(0);
    });

    it('skips the newest offset messages, also before a seq, and reads deep offsets', async () => {
      const batch = Array.from({ length: 30 }, (_, i) => userMessage(`m${i + 1}`, T0 + i));
      await store.appendMessages('k1', batch);
      expect((await store.readTail('k1', 3, { offset: 2 })).map((m) => m.seq)).toEqual([26, 27, 28]);
      expect((await store.readTail('k1', 3, { offset: 28 })).map((m) => m.seq)).toEqual([1, 2]);
      expect(await store.readTail('k1', 3, { offset: 30 })).toEqual([]);
      expect((await store.readTail('k1', 2, { beforeSeq: 10, offset: 3 })).map((m) => m.seq)).toEqual([5, 6]);
      expect((await store.readTail('k1', 2, { offset: 0 })).map((m) => m.seq)).toEqual([29, 30]);
      expect((await store.readTail('k1', 2, { offset: 1.7 })).map((m) => m.seq)).toEqual([28, 29]);
    });

    it('reads only the messages after afterSeq, the newest limit of them, within beforeSeq', async () => {
      for (let i = 1; i <= 30; i++) await store.appendMessages('k1', [userMessage(`m${i}`, T0 + i)]);
      expect((await store.readTail('k1', 10, { afterSeq: 27 })).map((m) => m.seq)).toEqual([28, 29, 30]);
      expect((await store.readTail('k1', 2, { afterSeq: 20 })).map((m) => m.seq)).toEqual([29, 30]);
      expect(await store.readTail('k1', 10, { afterSeq: 30 })).toEqual([]);
      expect((await store.readTail('k1', 10, { afterSeq: 0 })).length).toBe(10);
      expect((await store.readTail('k1', 10, { afterSeq: 5, beforeSeq: 9 })).map((m) => m.seq)).toEqual([
        6, 7, 8,
      ]);
      expect(await store.readTail('k1', 10, { afterSeq: 9, beforeSeq: 9 })).toEqual([]);
      expect((await store.readTail('k1', 10, { afterSeq: 24, offset: 3 })).map((m) => m.seq)).toEqual([
        25, 26, 27,
      ]);
      expect(await store.readTail('missing', 5, { afterSeq: 0 })).toEqual([]);
    });

    it('refuses to append to an unknown session', async () => {
      await expectCode(store.appendMessages('missing', [userMessage('x')]), 'SESSION_NOT_FOUND');
    });

    it('refuses a message JSON cannot hold (a cycle, a BigInt) with INVALID_ARGUMENT', async () => {
      const cycle: Record<string, unknown> = {};
      cycle.self = cycle;
      const holding = (value: unknown): TranscriptMessage => ({
        role: 'assistant',
        content: [{ type: 'toolCall', id: 'c1', name: 'odd', arguments: value }],
        timestamp: T0,
      });
      await expectCode(store.appendMessages('k1', [holding(cycle)]), 'INVALID_ARGUMENT');
      await expectCode(store.appendMessages('k1', [holding({ n: 1n })]), 'INVALID_ARGUMENT');
      expect(await store.countMessages('k1')).toBe(0);
    });

    it('keeps a block nested 900 levels deep, and refuses one nested 5,000 deep with INVALID_ARGUMENT', async () => {
      const withArguments = (depth: number): TranscriptMessage => ({
        role: 'assistant',
        content: [{ type: 'toolCall', id: 'c1', name: 'deep', arguments: nestedValue(depth) }],
        timestamp: T0,
      });
      await store.appendMessages('k1', [withArguments(900)]);
      const [kept] = await store.readTail('k1', 1);
      const block = Array.isArray(kept?.content) ? kept.content[0] : undefined;
      expect(block?.type === 'toolCall' && nestingOf(block.arguments)).toEqual({ depth: 900, leaf: 'end' });
      await expectCode(
        store.appendMessages('k1', [userMessage('a'), withArguments(5000)]),
        'INVALID_ARGUMENT',
      );
      expect(await store.countMessages('k1')).toBe(1);
      await expectCode(
        store.putSession(makeSessionRecord('k3', { meta: { deep: nestedValue(5000) } })),
        'INVALID_ARGUMENT',
      );
      await expectCode(store.patchSession('k2', { meta: { deep: nestedValue(5000) } }), 'INVALID_ARGUMENT');
      await expectCode(
        store.createRun(makeRunRecord('r1', 'k1', { meta: { deep: nestedValue(5000) } })),
        'INVALID_ARGUMENT',
      );
      expect(await store.getSession('k3')).toBeUndefined();
      expect((await store.getSession('k2'))?.meta).toBeUndefined();
      expect(await store.getRun('r1')).toBeUndefined();
    });
  });

  describe('searching transcripts', () => {
    const keysOf = (hits: readonly { sessionKey: string; message: { seq: number } }[]) =>
      hits.map((h) => `${h.sessionKey}#${h.message.seq}`);
    const seed = async () => {
      await store.putSession(makeSessionRecord('agent:main:main', { kind: 'main' }));
      await store.putSession(makeSessionRecord('agent:main:tg:group:1', { kind: 'group' }));
      await store.putSession(makeSessionRecord('agent:ops:main', { kind: 'main' }));
      await store.appendMessages('agent:main:main', [
        userMessage('The harbour crane lifted a blue container.'),
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'harbour crane secretplan' },
            { type: 'text', text: 'Harbour CRANE: harbour crane, harbour crane, again.' },
            { type: 'toolCall', id: 'c1', name: 'x', arguments: { q: 'toolcallword' } },
          ],
          timestamp: T0,
        },
        { role: 'toolResult', content: 'harbour crane toolresultword', toolCallId: 'c1', timestamp: T0 },
      ]);
      await store.appendMessages('agent:main:tg:group:1', [
        userMessage('a crane but no port here'),
        userMessage('harbour crane once, then lots of other unrelated filler words'),
      ]);
      await store.appendMessages('agent:ops:main', [userMessage('harbour crane over at ops')]);
    };

    it('finds messages holding every word, case-insensitively, ranked by relevance', async () => {
      await seed();
      const { hits, total } = await store.searchMessages({ text: 'HARBOUR crane' });
      expect(total).toBe(4);
      expect(hits[0]).toMatchObject({
        sessionKey: 'agent:main:main',
        message: { seq: 2, role: 'assistant' },
      });
      expect(keysOf(hits).sort()).toEqual(
        ['agent:main:main#1', 'agent:main:main#2', 'agent:main:tg:group:1#2', 'agent:ops:main#1'].sort(),
      );
      expect((await store.searchMessages({ text: 'crane port' })).hits.map((h) => h.message.content)).toEqual(
        ['a crane but no port here'],
      );
      expect(await store.searchMessages({ text: 'nothing-matches-this' })).toEqual({ hits: [], total: 0 });
      expect(await store.searchMessages({ text: '  "*" ' })).toEqual({ hits: [], total: 0 });
    });

    it('does not index tool results, thinking or tool-call arguments', async () => {
      await seed();
      for (const text of ['toolresultword', 'secretplan', 'toolcallword']) {
        expect((await store.searchMessages({ text })).total).toBe(0);
      }
    });

    it('filters by kinds, keys and agentIds, and pages with limit and offset', async () => {
      await seed();
      const all = await store.searchMessages({ text: 'harbour crane' });
      expect(keysOf((await store.searchMessages({ text: 'harbour crane', kinds: ['group'] })).hits)).toEqual([
        'agent:main:tg:group:1#2',
      ]);
      expect(
        keysOf((await store.searchMessages({ text: 'harbour crane', keys: ['agent:ops:main'] })).hits),
      ).toEqual(['agent:ops:main#1']);
      const mainAgent = await store.searchMessages({ text: 'harbour crane', agentIds: ['main'] });
      expect(mainAgent.total).toBe(3);
      expect(mainAgent.hits.every((h) => h.sessionKey.startsWith('agent:main:'))).toBe(true);
      const page1 = await store.searchMessages({ text: 'harbour crane', limit: 2 });
      const page2 = await store.searchMessages({ text: 'harbour crane', limit: 2, offset: 2 });
      expect(page1.total).toBe(4);
      expect([...keysOf(page1.hits), ...keysOf(page2.hits)]).toEqual(keysOf(all.hits));
      expect(await store.searchMessages({ text: 'harbour crane', limit: 0 })).toEqual({
        hits: [],
        total: 4,
      });
      expect(await store.searchMessages({ text: 'harbour crane', keys: [] })).toEqual({
        hits: [],
        total: 0,
      });
    });

    it('widens the scope of keys and agentIds by alsoKeys, kinds still applied', async () => {
      await seed();
      const text = 'harbour crane';
      const opsAndGroup = { text, agentIds: ['ops'], alsoKeys: ['agent:main:tg:group:1', 'missing'] };
      const found = await store.searchMessages(opsAndGroup);
      expect(found.total).toBe(2);
      expect(keysOf(found.hits).sort()).toEqual(['agent:main:tg:group:1#2', 'agent:ops:main#1']);
      expect(await store.searchMessages({ ...opsAndGroup, limit: 0 })).toEqual({ hits: [], total: 2 });
      expect(keysOf((await store.searchMessages({ ...opsAndGroup, kinds: ['main'] })).hits)).toEqual([
        'agent:ops:main#1',
      ]);
      expect(
        (
          await store.searchMessages({
            text,
            keys: ['agent:main:main'],
            agentIds: ['ops'],
            alsoKeys: ['agent:ops:main'],
          })
        ).total,
      ).toBe(1);
      expect((await store.searchMessages({ text, agentIds: [], alsoKeys: ['agent:ops:main'] })).total).toBe(
        1,
      );
      expect((await store.searchMessages({ text, alsoKeys: ['agent:ops:main'] })).total).toBe(4);
      const page1 = await store.searchMessages({ ...opsAndGroup, limit: 1 });
      const page2 = await store.searchMessages({ ...opsAndGroup, limit: 1, offset: 1 });
      expect([...keysOf(page1.hits), ...keysOf(page2.hits)]).toEqual(keysOf(found.hits));
    });

    it('keeps and finds a message whose text holds a NUL character, with its platform id', async () => {
      await store.putSession(makeSessionRecord('k1'));
      const [stored] = await store.appendMessages('k1', [userMessage('before\u0000after words')]);
      await store.setMessagePlatformId('k1', stored!.seq, 'platform-7');
      const [read] = await store.readTail('k1', 1);
      expect(read).toMatchObject({ content: 'before\u0000after words', platformMessageId: 'platform-7' });
      const { hits } = await store.searchMessages({ text: 'after words' });
      expect(hits.map((h) => h.message)).toEqual([read]);
    });

    it('forgets a deleted session, also when a session of that key is created again', async () => {
      await seed();
      await store.deleteSession('agent:ops:main');
      expect((await store.searchMessages({ text: 'ops' })).total).toBe(0);
      await store.putSession(makeSessionRecord('agent:ops:main', { kind: 'main' }));
      await store.appendMessages('agent:ops:main', [userMessage('fresh start')]);
      expect((await store.searchMessages({ text: 'ops' })).total).toBe(0);
      expect(keysOf((await store.searchMessages({ text: 'fresh' })).hits)).toEqual(['agent:ops:main#1']);
    });

    it('rolls back the index entries of an append that is rolled back', async () => {
      await store.putSession(makeSessionRecord('k1'));
      await expect(
        store.transaction(async (tx) => {
          await tx.appendMessages('k1', [userMessage('ephemeral zebra')]);
          expect((await tx.searchMessages({ text: 'zebra' })).total).toBe(1);
          throw new Error('undo');
        }),
      ).rejects.toThrow('undo');
      expect((await store.searchMessages({ text: 'zebra' })).total).toBe(0);
      await store.appendMessages('k1', [userMessage('lasting zebra')]);
      const { hits } = await store.searchMessages({ text: 'zebra' });
      expect(hits.map((h) => h.message.content)).toEqual(['lasting zebra']);
    });
  });

  describe('runs', () => {
    it('creates, reads, updates and lists runs newest first', async () => {
      await store.createRun(makeRunRecord('r1', 'k1', { createdAt: T0 + 1 }));
      await store.createRun(makeRunRecord('r2', 'k1', { createdAt: T0 + 2, spawnedBy: 'p' }));
      await store.createRun(makeRunRecord('r3', 'k2', { createdAt: T0 + 3 }));
      const updated = await store.updateRun('r1', { status: 'done', reply: 'ok', endedAt: T0 + 9 });
      expect(updated).toMatchObject({ runId: 'r1', status: 'done', reply: 'ok', sessionKey: 'k1' });
      expect(await store.getRun('r1')).toEqual(updated);
      expect((await store.listRuns()).map((r) => r.runId)).toEqual(['r3', 'r2', 'r1']);
      expect((await store.listRuns({ sessionKey: 'k1' })).map((r) => r.runId)).toEqual(['r2', 'r1']);
      expect((await store.listRuns({ statuses: ['done'] })).map((r) => r.runId)).toEqual(['r1']);
      expect((await store.listRuns({ spawnedBy: 'p' })).map((r) => r.runId)).toEqual(['r2']);
      expect((await store.listRuns({ limit: 1 })).map((r) => r.runId)).toEqual(['r3']);
    });

    it('refuses duplicate run ids and updates of unknown runs', async () => {
      await store.createRun(makeRunRecord('r1', 'k1'));
      await expectCode(store.createRun(makeRunRecord('r1', 'k1')), 'CONFLICT');
      await expectCode(store.updateRun('nope', { status: 'done' }), 'RUN_NOT_FOUND');
      await expectCode(store.updateRun('nope', {}), 'RUN_NOT_FOUND');
    });

    it('changes only the fields a patch names, and an empty patch returns the run as stored', async () => {
      const run = makeRunRecord('r1', 'k1', {
        status: 'running',
        startedAt: T0 + 1,
        attempts: 1,
        reply: 'draft',
        meta: { kept: true, delivery: { kind: 'reply', status: 'sending', at: T0 } },
      });
      await store.createRun(run);
      expect(await store.updateRun('r1', {})).toEqual(run);
      const ended = await store.updateRun('r1', { status: 'done', endedAt: T0 + 2, attempts: 2 });
      expect(ended).toEqual({ ...run, status: 'done', endedAt: T0 + 2, attempts: 2 });
      const replied = await store.updateRun('r1', { reply: 'final', updatedAt: T0 + 3, endedAt: undefined });
      expect(replied).toEqual({ ...ended, reply: 'final', updatedAt: T0 + 3 });
      expect(await store.getRun('r1')).toEqual(replied);
    });

    it("replaces a run's meta whole, delivery state included, and keeps a null the meta holds", async () => {
      const delivery = { kind: 'reply', status: 'delivered', messageId: 'p1', messageIds: ['p1'], at: T0 };
      await store.createRun(
        makeRunRecord('r1', 'k1', {
          meta: { kept: 1, pendingDelivery: { kind: 'reply', text: 'hi' }, delivery },
        }),
      );
      await store.createRun(makeRunRecord('r2', 'k1', { meta: { pendingDelivery: null, delivery: null } }));
      expect((await store.getRun('r2'))?.meta).toEqual({ pendingDelivery: null, delivery: null });
      expect((await store.updateRun('r1', { meta: { other: 2 } })).meta).toEqual({ other: 2 });
      expect((await store.getRun('r1'))?.meta).toEqual({ other: 2 });
      await store.updateRun('r1', { meta: { delivery } });
      expect((await store.listRuns({ sessionKey: 'k1' })).map((r) => r.meta)).toEqual([
        { pendingDelivery: null, delivery: null },
        { delivery },
      ]);
    });

    it('moves a run to the session and spawner a patch names, listed there', async () => {
      await store.createRun(makeRunRecord('r1', 'k1', { createdAt: T0 + 1 }));
      await store.createRun(makeRunRecord('r2', 'k1', { createdAt: T0 + 2 }));
      const moved = await store.updateRun('r1', { sessionKey: 'k2', spawnedBy: 'p', createdAt: T0 + 3 });
      expect(moved).toMatchObject({ sessionKey: 'k2', spawnedBy: 'p', createdAt: T0 + 3 });
      expect((await store.listRuns({ sessionKey: 'k2' })).map((r) => r.runId)).toEqual(['r1']);
      expect((await store.listRuns({ spawnedBy: 'p' })).map((r) => r.runId)).toEqual(['r1']);
      expect((await store.listRuns()).map((r) => r.runId)).toEqual(['r1', 'r2']);
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

    it('inserts each (childSessionKey, runId) once', async () => {
      expect(await store.putOutbox(entry('r1'))).toBe(true);
      expect(await store.putOutbox(entry('r1', { payload: { text: 'second' } }))).toBe(false);
      expect((await store.getOutbox('agent:main:subagent:c', 'r1'))?.payload).toEqual({
        text: 'result r1',
      });
      expect(await store.putOutbox(entry('r1', { childSessionKey: 'agent:main:subagent:d' }))).toBe(true);
    });

    it('updates entries and lists due ones oldest first by status and requester', async () => {
      await store.putOutbox(entry('r1', { createdAt: T0 + 2 }));
      await store.putOutbox(entry('r2', { createdAt: T0 + 1, nextAttemptAt: T0 + 1000 }));
      await store.putOutbox(entry('r3', { createdAt: T0 + 3, requesterSessionKey: 'other' }));
      const updated = await store.updateOutbox('agent:main:subagent:c', 'r3', {
        status: 'delivered',
        platformMessageId: 'm1',
        deliveredAt: T0 + 5,
      });
      expect(updated).toMatchObject({ status: 'delivered', platformMessageId: 'm1', runId: 'r3' });
      expect((await store.listOutbox()).map((e) => e.runId)).toEqual(['r2', 'r1']);
      expect((await store.listOutbox({ dueBefore: T0 + 10 })).map((e) => e.runId)).toEqual(['r1']);
      expect((await store.listOutbox({ statuses: ['delivered'] })).map((e) => e.runId)).toEqual(['r3']);
      expect(
        (await store.listOutbox({ statuses: ['pending', 'delivered'], requesterSessionKey: 'other' })).map(
          (e) => e.runId,
        ),
      ).toEqual(['r3']);
      expect((await store.listOutbox({ limit: 1 })).map((e) => e.runId)).toEqual(['r2']);
      await expectCode(store.updateOutbox('x', 'y', { status: 'delivered' }), 'STORE_ERROR');
    });
  });

  describe('session inbox', () => {
    const inbox = (id: string, createdAt: number): InboxEntry => ({
      sessionKey: 'k1',
      id,
      message: userMessage(id, createdAt),
      createdAt,
    });

    it('inserts or ignores by id, lists unconsumed oldest first, and consumes', async () => {
      expect(await store.putInbox(inbox('b', T0 + 2))).toBe(true);
      expect(await store.putInbox(inbox('a', T0 + 1))).toBe(true);
      expect(await store.putInbox(inbox('a', T0 + 5))).toBe(false);
      expect((await store.listInbox('k1')).map((e) => e.id)).toEqual(['a', 'b']);
      await store.consumeInbox('k1', ['a'], T0 + 9);
      expect((await store.listInbox('k1')).map((e) => e.id)).toEqual(['b']);
      expect(await store.putInbox(inbox('a', T0 + 10))).toBe(false);
      expect(await store.listInbox('other')).toEqual([]);
    });

    it('consumes an entry whose message holds a NUL character', async () => {
      const entry = { ...inbox('a', T0 + 1), message: userMessage('x\u0000y', T0 + 1) };
      await store.putInbox(entry);
      expect(await store.listInbox('k1')).toEqual([entry]);
      await store.consumeInbox('k1', ['a'], T0 + 9);
      expect(await store.listInbox('k1')).toEqual([]);
    });

    it('lists the keys of the sessions with unconsumed entries, in key order', async () => {
      expect(await store.listInboxSessionKeys()).toEqual([]);
      await store.putInbox({ ...inbox('a', T0 + 1), sessionKey: 'k2' });
      await store.putInbox(inbox('b', T0 + 2));
      await store.putInbox(inbox('c', T0 + 3));
      await store.putInbox({ ...inbox('d', T0 + 4), sessionKey: 'k3' });
      expect(await store.listInboxSessionKeys()).toEqual(['k1', 'k2', 'k3']);
      await store.consumeInbox('k1', ['b', 'c'], T0 + 9);
      await store.consumeInbox('k3', ['d'], T0 + 9);
      expect(await store.listInboxSessionKeys()).toEqual(['k2']);
    });
  });

  describe('thread bindings', () => {
    it('puts, replaces, reads, lists and deletes bindings', async () => {
      await store.putThreadBinding(binding('k1', 't1'));
      await store.putThreadBinding(binding('k2', 't2', 'discord'));
      await store.putThreadBinding({ ...binding('k3', 't1'), lastActiveAt: T0 + 5 });
      expect(await store.getThreadBinding('telegram', 'default', 't1')).toMatchObject({ sessionKey: 'k3' });
      expect((await store.listThreadBindings()).length).toBe(2);
      expect((await store.listThreadBindings({ channel: 'discord' })).map((b) => b.sessionKey)).toEqual([
        'k2',
      ]);
      expect((await store.listThreadBindings({ sessionKey: 'k3' })).map((b) => b.threadId)).toEqual(['t1']);
      expect(await store.deleteThreadBinding('telegram', 'default', 't1')).toBe(true);
      expect(await store.deleteThreadBinding('telegram', 'default', 't1')).toBe(false);
      expect(await store.getThreadBinding('telegram', 'default', 't1')).toBeUndefined();
    });
  });

  describe('pairing', () => {
    it('puts, replaces, reads, lists by status and code, and deletes pairings', async () => {
      await store.putPairing(pairing('u1', { code: 'AAAA1111', createdAt: T0 + 2, expiresAt: T0 + 99 }));
      await store.putPairing(
        pairing('u2', { code: 'BBBB2222', createdAt: T0 + 1, meta: { username: 'bee' } }),
      );
      await store.putPairing(pairing('u3', { accountId: 'second', status: 'approved', approvedAt: T0 }));
      await store.putPairing(pairing('u1', { channel: 'whatsapp', code: 'AAAA1111' }));
      expect(await store.getPairing('telegram', 'default', 'u2')).toEqual(
        pairing('u2', { code: 'BBBB2222', createdAt: T0 + 1, meta: { username: 'bee' } }),
      );
      expect((await store.listPairings({ channel: 'telegram' })).map((p) => p.peerId)).toEqual([
        'u3',
        'u2',
        'u1',
      ]);
      expect(
        (await store.listPairings({ channel: 'telegram', status: 'pending' })).map((p) => p.peerId),
      ).toEqual(['u2', 'u1']);
      expect(
        (await store.listPairings({ channel: 'telegram', accountId: 'second' })).map((p) => p.peerId),
      ).toEqual(['u3']);
      expect(
        (await store.listPairings({ channel: 'telegram', code: 'AAAA1111' })).map((p) => p.peerId),
      ).toEqual(['u1']);
      await store.putPairing(pairing('u1', { status: 'approved', approvedAt: T0 + 5, createdAt: T0 + 2 }));
      expect(await store.listPairings({ channel: 'telegram', code: 'AAAA1111' })).toEqual([]);
      expect((await store.getPairing('telegram', 'default', 'u1'))?.status).toBe('approved');
      expect(await store.deletePairing('telegram', 'default', 'u1')).toBe(true);
      expect(await store.deletePairing('telegram', 'default', 'u1')).toBe(false);
      expect(await store.getPairing('telegram', 'default', 'u1')).toBeUndefined();
      expect(await store.getPairing('whatsapp', 'default', 'u1')).toBeDefined();
    });
  });

  describe('lookups folded into listSessions', () => {
    it('finds a session by sessionId, archived or not', async () => {
      await store.putSession(makeSessionRecord('k1', { sessionId: 'one', archivedAt: T0 }));
      expect(await store.listSessions({ sessionId: 'one' })).toEqual([]);
      expect((await sessionById('one'))?.key).toBe('k1');
      expect(await sessionById('nope')).toBeUndefined();
    });

    it('finds sessions by label, optionally within one agent', async () => {
      await store.putSession(makeSessionRecord('agent:a:x', { label: 'ops', updatedAt: T0 + 1 }));
      await store.putSession(makeSessionRecord('agent:b:y', { label: 'ops', updatedAt: T0 + 2 }));
      expect((await labelled('ops')).map((s) => s.key)).toEqual(['agent:b:y', 'agent:a:x']);
      expect(await store.countSessions({ label: 'ops', agentIds: ['b'] })).toBe(1);
    });
  });

  describe('platform message ids', () => {
    it('records the platform id on a stored message and ignores a missing one', async () => {
      await store.putSession(makeSessionRecord('k1'));
      await store.appendMessages('k1', [userMessage('a'), userMessage('b')]);
      await store.setMessagePlatformId('k1', 2, 'tg-77');
      await store.setMessagePlatformId('k1', 9, 'tg-99');
      await store.setMessagePlatformId('missing', 1, 'x');
      const tail = await store.readTail('k1', 5);
      expect(tail.map((m) => m.platformMessageId)).toEqual([undefined, 'tg-77']);
    });
  });

  describe('calls on the store inside its own transaction', () => {
    it('reject with STORE_ERROR instead of waiting forever or escaping the transaction', async () => {
      await expect(
        store.transaction(async (tx) => {
          await tx.putSession(makeSessionRecord('k1'));
          await store.getSession('k1');
        }),
      ).rejects.toMatchObject({ code: 'STORE_ERROR' });
      expect(await store.getSession('k1')).toBeUndefined();
    });
  });

  describe('transactions', () => {
    const outboxRow = (runId: string): OutboxEntry => ({
      childSessionKey: 'k1',
      runId,
      requesterSessionKey: 'k2',
      status: 'pending',
      payload: {},
      attempts: 0,
      nextAttemptAt: T0,
      createdAt: T0,
      updatedAt: T0,
    });

    it('commits every write together and resolves with the function result', async () => {
      const result = await store.transaction(async (tx) => {
        await tx.putSession(makeSessionRecord('k1'));
        await tx.appendMessages('k1', [userMessage('first')]);
        await tx.createRun(makeRunRecord('r1', 'k1'));
        return 'done';
      });
      expect(result).toBe('done');
      expect(await store.getSession('k1')).toBeDefined();
      expect(await store.countMessages('k1')).toBe(1);
      expect(await store.getRun('r1')).toBeDefined();
    });

    it('reads its own writes through tx', async () => {
      await store.transaction(async (tx) => {
        await tx.putSession(makeSessionRecord('k1', { label: 'mine' }));
        expect((await tx.getSession('k1'))?.label).toBe('mine');
        await tx.appendMessages('k1', [userMessage('a')]);
        expect(await tx.countMessages('k1')).toBe(1);
      });
    });

    it('rolls back every kind of write when the function throws, and rethrows', async () => {
      await store.putSession(makeSessionRecord('k1', { label: 'before' }));
      await store.appendMessages('k1', [userMessage('kept')]);
      await store.createRun(makeRunRecord('r0', 'k1'));
      await store.putPairing(pairing('p0', { status: 'pending', code: 'CODE0' }));
      const boom = new Error('boom');
      await expect(
        store.transaction(async (tx) => {
          await tx.putSession(makeSessionRecord('k2'));
          await tx.patchSession('k1', { label: 'after' });
          await tx.appendMessages('k1', [userMessage('lost')]);
          await tx.setMessagePlatformId('k1', 1, 'platform-1');
          await tx.createRun(makeRunRecord('r1', 'k1'));
          await tx.updateRun('r0', { status: 'done' });
          await tx.putOutbox(outboxRow('r1'));
          await tx.putInbox({ sessionKey: 'k1', id: 'i', message: userMessage('i'), createdAt: T0 });
          await tx.putThreadBinding(binding('k1', 't9'));
          await tx.putPairing(pairing('p0', { status: 'approved', approvedAt: T0 }));
          await tx.putPairing(pairing('p1', { status: 'approved', approvedAt: T0 }));
          throw boom;
        }),
      ).rejects.toBe(boom);
      expect(await store.getSession('k2')).toBeUndefined();
      expect((await store.getSession('k1'))?.label).toBe('before');
      expect(await store.readTail('k1', 10)).toEqual([{ ...userMessage('kept'), seq: 1 }]);
      expect(await store.getRun('r1')).toBeUndefined();
      expect((await store.getRun('r0'))?.status).toBe('queued');
      expect(await store.getOutbox('k1', 'r1')).toBeUndefined();
      expect(await store.listInbox('k1')).toEqual([]);
      expect(await store.getThreadBinding('telegram', 'default', 't9')).toBeUndefined();
      expect((await store.getPairing('telegram', 'default', 'p0'))?.status).toBe('pending');
      expect(await store.getPairing('telegram', 'default', 'p1')).toBeUndefined();
      expect((await store.appendMessages('k1', [userMessage('next')]))[0]?.seq).toBe(2);
    });

    it('rolls back a write whose own call failed inside the transaction', async () => {
      await store.putSession(makeSessionRecord('k1', { sessionId: 'taken' }));
      await expect(
        store.transaction(async (tx) => {
          await tx.putSession(makeSessionRecord('k2'));
          await tx.putSession(makeSessionRecord('k3', { sessionId: 'taken' }));
        }),
      ).rejects.toMatchObject({ code: 'CONFLICT' });
      expect(await store.getSession('k2')).toBeUndefined();
    });

    it('rolls back a delete', async () => {
      await store.putSession(makeSessionRecord('k1'));
      await store.appendMessages('k1', [userMessage('a')]);
      await expect(
        store.transaction(async (tx) => {
          await tx.deleteSession('k1');
          throw new Error('undo');
        }),
      ).rejects.toThrow('undo');
      expect((await sessionById('sid-k1'))?.key).toBe('k1');
      expect(await store.countMessages('k1')).toBe(1);
    });

    it('joins tx.transaction to the outer transaction', async () => {
      await expect(
        store.transaction(async (tx) => {
          await tx.transaction((inner) => inner.putSession(makeSessionRecord('inner')));
          throw new Error('outer fails');
        }),
      ).rejects.toThrow('outer fails');
      expect(await store.getSession('inner')).toBeUndefined();
      expect(await store.transaction((tx) => tx.transaction(async () => 42))).toBe(42);
    });

    it('hides partial writes of an open transaction from calls outside it', async () => {
      await store.putSession(makeSessionRecord('k1', { label: 'before' }));
      let release!: () => void;
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      let wrote!: () => void;
      const written = new Promise<void>((resolve) => {
        wrote = resolve;
      });
      const open = store.transaction(async (tx) => {
        await tx.patchSession('k1', { label: 'inside' });
        await tx.putSession(makeSessionRecord('k2'));
        wrote();
        await gate;
        throw new Error('abandon');
      });
      await written;
      const outside = Promise.all([store.getSession('k1'), store.getSession('k2')]);
      release();
      await expect(open).rejects.toThrow('abandon');
      const [k1, k2] = await outside;
      expect(k1?.label).toBe('before');
      expect(k2).toBeUndefined();
    });

    it("never lets two overlapping transactions see each other's partial writes", async () => {
      await store.putSession(makeSessionRecord('k1', { label: 'zero' }));
      const seen: (string | undefined)[] = [];
      const step = async (label: string) =>
        store.transaction(async (tx) => {
          seen.push((await tx.getSession('k1'))?.label);
          await tx.patchSession('k1', { label: `${label}-partial` });
          await new Promise((resolve) => setTimeout(resolve, 5));
          await tx.patchSession('k1', { label });
        });
      await Promise.all([step('one'), step('two'), step('three')]);
      expect(seen).not.toContain('one-partial');
      expect(seen).not.toContain('two-partial');
      expect(seen).not.toContain('three-partial');
      expect(['one', 'two', 'three']).toContain((await store.getSession('k1'))?.label);
    });

    it('loses no write when many transactions append to one session at once', async () => {
      await store.putSession(makeSessionRecord('k1'));
      await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          store.transaction(async (tx) => {
            await tx.appendMessages('k1', [userMessage(`m${i}`)]);
            await tx.patchSession('k1', { updatedAt: T0 + i });
          }),
        ),
      );
      const tail = await store.readTail('k1', 50);
      expect(tail.map((m) => m.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      expect(new Set(tail.map((m) => m.content)).size).toBe(20);
    });

    it('serialises concurrent patches of one session so no field is lost', async () => {
      await store.putSession(makeSessionRecord('k1'));
      await Promise.all([
        store.patchSession('k1', { label: 'a' }),
        store.patchSession('k1', { model: 'p/m' }),
        store.patchSession('k1', { sendPolicy: 'deny' }),
        store.transaction((tx) => tx.patchSession('k1', { displayName: 'Kay' })),
      ]);
      expect(await store.getSession('k1')).toMatchObject({
        label: 'a',
        model: 'p/m',
        sendPolicy: 'deny',
        displayName: 'Kay',
      });
    });

    it('refuses a tx handle used after its transaction settled', async () => {
      let leaked!: StoreTransaction;
      await store.transaction(async (tx) => {
        leaked = tx;
      });
      await expectCode(leaked.getSession('k1'), 'STORE_ERROR');
    });
  });

  describe('closing', () => {
    it('refuses calls after close, and closing twice is harmless', async () => {
      const other = await makeStore();
      await other.close();
      await other.close();
      await expectCode(other.getSession('k1'), 'STORE_ERROR');
      await options.cleanup?.(other);
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

function pairing(peerId: string, overrides: Partial<PairingRecord> = {}): PairingRecord {
  return {
    channel: 'telegram',
    accountId: 'default',
    peerId,
    status: 'pending',
    createdAt: T0,
    ...overrides,
  };
}
