import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { Readable } from 'node:stream';
import { isColloquyError, type TranscriptMessage } from '@colloquy/core';
import type { SessionKind } from '@colloquy/core/gateway';
import { type DeliveryState, MemoryStore, type SessionListQuery, type Store } from '@colloquy/core/store';
import { makeRunRecord, makeSessionRecord } from '@colloquy/testkit';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createTempDir } from '../test/helpers/temp-dir.js';
import { openSqliteStore } from './open-sqlite-store.js';
import type { SqliteStore } from './sqlite-store.js';

const temp = createTempDir();
afterAll(() => temp.cleanup());

const opened: SqliteStore[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
});

function open(file = temp.file('store.db'), options: { readonly?: boolean } = {}): SqliteStore {
  const store = openSqliteStore({ file, ...options });
  opened.push(store);
  return store;
}

async function codeOf(pending: unknown): Promise<string | undefined> {
  try {
    await pending;
  } catch (error) {
    return isColloquyError(error) ? error.code : `not a ColloquyError: ${String(error)}`;
  }
  return undefined;
}

const T0 = 1_700_000_000_000;
const say = (text: string, timestamp = T0): TranscriptMessage => ({ role: 'user', content: text, timestamp });

/** A small deterministic PRNG (mulberry32), so failures reproduce. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('SqliteStore', () => {
  it('keeps everything after close and reopen', async () => {
    const file = temp.file('reopen.db');
    const first = openSqliteStore({ file });
    await first.putSession(
      makeSessionRecord('agent:main:main', { label: 'home', meta: { a: [1, { b: 'c' }] } }),
    );
    await first.appendMessages('agent:main:main', [say('one'), say('two')]);
    await first.createRun(makeRunRecord('r1', 'agent:main:main'));
    await first.close();

    const second = open(file);
    expect((await second.getSession('agent:main:main'))?.meta).toEqual({ a: [1, { b: 'c' }] });
    expect((await second.readTail('agent:main:main', 10)).map((m) => [m.seq, m.content])).toEqual([
      [1, 'one'],
      [2, 'two'],
    ]);
    expect((await second.getRun('r1'))?.status).toBe('queued');
  });

  it('omits undefined fields instead of storing them', async () => {
    const store = open();
    await store.putSession({ ...makeSessionRecord('k1'), label: undefined, model: 'p/m' });
    const read = (await store.getSession('k1'))!;
    expect('label' in read).toBe(false);
    expect(read.model).toBe('p/m');
    const [stored] = await store.appendMessages('k1', [{ ...say('x'), runId: undefined }]);
    expect(stored && 'runId' in stored).toBe(false);
  });

  it('stores a message the same way whether appended alone, in a batch, or inside a transaction', async () => {
    const store = open();
    await store.putSession(makeSessionRecord('k1'));
    const rich: TranscriptMessage = {
      role: 'assistant',
      content: [
        { type: 'text', text: 'héllo "quoted" \\ \u2028 😀' },
        {
          type: 'toolCall',
          id: 'c1',
          name: 'sessions_send',
          arguments: { nested: [1, 2.5, -0.125, null, true] },
        },
      ],
      timestamp: T0,
      usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 },
      details: { seq: 'not the store seq', big: 2 ** 53 - 1, tiny: 1e-7 },
    };
    const alone = await store.appendMessages('k1', [rich]);
    const batch = await store.appendMessages('k1', [rich, rich]);
    const inTransaction = await store.transaction((tx) => tx.appendMessages('k1', [rich]));
    expect([...alone, ...batch, ...inTransaction]).toEqual([1, 2, 3, 4].map((seq) => ({ ...rich, seq })));
    expect(await store.readTail('k1', 10)).toEqual([...alone, ...batch, ...inTransaction]);
  });

  it('refuses a sessionId that already belongs to another session, and keeps both rows intact', async () => {
    const store = open();
    await store.putSession(makeSessionRecord('k1', { sessionId: 'same' }));
    expect(await codeOf(store.putSession(makeSessionRecord('k2', { sessionId: 'same' })))).toBe('CONFLICT');
    expect(await store.getSession('k2')).toBeUndefined();
    expect((await store.listSessions({ sessionId: 'same' }))[0]?.key).toBe('k1');
  });

  it('refuses values that are not JSON-serialisable', async () => {
    const store = open();
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(await codeOf(store.putSession(makeSessionRecord('k1', { meta: cyclic })))).toBe(
      'INVALID_ARGUMENT',
    );
    expect(await store.getSession('k1')).toBeUndefined();
  });

  it('counts messages without reading the transcript, also after a delete and a recreate', async () => {
    const store = open();
    await store.putSession(makeSessionRecord('k1'));
    await store.transaction(async (tx) => {
      for (let i = 0; i < 1200; i++) await tx.appendMessages('k1', [say(`m${i}`)]);
    });
    expect(await store.countMessages('k1')).toBe(1200);
    await store.deleteSession('k1');
    await store.putSession(makeSessionRecord('k1'));
    await store.appendMessages('k1', [say('a'), say('b')]);
    expect(await store.countMessages('k1')).toBe(2);
  });

  it('reads limits the way MemoryStore does: infinite means all, negatives mean none', async () => {
    const sqlite = open();
    const memory = new MemoryStore();
    for (const store of [sqlite, memory] as Store[]) {
      await store.putSession(makeSessionRecord('k1'));
      await store.putSession(makeSessionRecord('k2', { updatedAt: T0 + 1 }));
      await store.appendMessages('k1', [say('a'), say('b'), say('c')]);
      await store.createRun(makeRunRecord('r1', 'k1'));
    }
    for (const limit of [Number.POSITIVE_INFINITY, Number.NaN, -3, 1.7, 0]) {
      const both = async (read: (store: Store) => Promise<unknown>) =>
        expect(await read(sqlite), String(limit)).toEqual(await read(memory));
      await both(async (s) => (await s.listSessions({ limit })).map((x) => x.key));
      await both(async (s) => (await s.listSessions({ kinds: ['other', 'main'], limit })).map((x) => x.key));
      if (Number.isInteger(limit) || limit === Number.POSITIVE_INFINITY) {
        await both(async (s) => (await s.readTail('k1', limit)).map((m) => m.seq));
      }
      await both(async (s) => (await s.listRuns({ limit })).map((r) => r.runId));
      await both((s) => s.listOutbox({ limit }));
    }
  });

  it('throws STORE_ERROR after close, and closing twice is harmless', async () => {
    const store = openSqliteStore({ file: temp.file('closed.db') });
    await store.close();
    await store.close();
    expect(await codeOf(store.getSession('k'))).toBe('STORE_ERROR');
    expect(await codeOf(store.transaction(async () => 1))).toBe('STORE_ERROR');
  });

  it('keeps the run columns in step whichever columns an update changes', async () => {
    const store = open();
    await store.putSession(makeSessionRecord('k1'));
    await store.putSession(makeSessionRecord('k2'));
    await store.createRun(makeRunRecord('r1', 'k1'));
    const ids = async (query: Parameters<Store['listRuns']>[0]) =>
      (await store.listRuns(query)).map((r) => r.runId);
    await store.updateRun('r1', { meta: { note: 'record only' } });
    expect(await ids({ statuses: ['queued'] })).toEqual(['r1']);
    await store.updateRun('r1', { status: 'running' });
    expect(await ids({ statuses: ['queued'] })).toEqual([]);
    expect(await ids({ statuses: ['running'], sessionKey: 'k1' })).toEqual(['r1']);
    expect((await store.readChanges('k1', 0))?.changes.status).toBe(1);
    await store.updateRun('r1', { sessionKey: 'k2', spawnedBy: 'k1' });
    expect(await ids({ sessionKey: 'k1' })).toEqual([]);
    expect(await ids({ sessionKey: 'k2', spawnedBy: 'k1', statuses: ['running'] })).toEqual(['r1']);
    expect((await store.getRun('r1'))?.meta).toEqual({ note: 'record only' });
  });

  it('keeps only queued and running runs in runs_active, and lists by status the way MemoryStore does', async () => {
    const sqlite = open();
    const memory = new MemoryStore();
    for (const store of [sqlite, memory] as Store[]) {
      await store.putSession(makeSessionRecord('k1'));
      for (const [i, id] of ['r1', 'r2', 'r3', 'r4'].entries()) {
        await store.createRun(makeRunRecord(id, 'k1', { createdAt: T0 + i }));
      }
      await store.updateRun('r2', { status: 'running' });
      await store.updateRun('r3', { status: 'running' });
      await store.updateRun('r3', { status: 'done' });
      await store.updateRun('r4', { status: 'killed' });
    }
    const db = (sqlite as unknown as { sqlite: { db: Database.Database } }).sqlite.db;
    const active = () =>
      db
        .prepare("SELECT run_id FROM runs INDEXED BY runs_active WHERE status IN ('queued', 'running')")
        .pluck()
        .all();
    expect(new Set(active())).toEqual(new Set(['r1', 'r2']));
    const queries: Parameters<Store['listRuns']>[0][] = [
      { statuses: ['queued', 'running'] },
      { statuses: ['running'] },
      { statuses: ['queued'], sessionKey: 'k1' },
      { statuses: ['done', 'killed'] },
      { statuses: ['queued', 'done'], limit: 1 },
      {},
    ];
    for (const query of queries) {
      const ids = async (store: Store) => (await store.listRuns(query)).map((r) => r.runId);
      expect(await ids(sqlite), JSON.stringify(query)).toEqual(await ids(memory));
    }
    await sqlite.updateRun('r2', { status: 'done' });
    await sqlite.updateRun('r1', { status: 'interrupted' });
    expect(active()).toEqual([]);
    expect(await sqlite.listRuns({ statuses: ['queued', 'running'] })).toEqual([]);
  });

  it('keeps the session indexes in step when putSession leaves the columns alone or changes them', async () => {
    const store = open();
    await store.putSession(makeSessionRecord('k1', { updatedAt: 10 }));
    await store.putSession(makeSessionRecord('k2', { updatedAt: 20 }));
    const keys = async (query: SessionListQuery = {}) => (await store.listSessions(query)).map((s) => s.key);
    const k1 = (await store.getSession('k1'))!;
    await store.putSession({ ...k1, updatedAt: 30, displayName: 'renamed' });
    expect(await keys()).toEqual(['k1', 'k2']);
    expect(await keys({ activeMinutes: 1, now: 25 + 60_000 })).toEqual(['k1']);
    expect((await store.getSession('k1'))?.displayName).toBe('renamed');
    await store.putSession({ ...k1, updatedAt: 40, label: 'home' });
    expect(await keys({ label: 'home' })).toEqual(['k1']);
    await store.putSession({ ...k1, updatedAt: 50, archivedAt: 50 });
    expect(await keys()).toEqual(['k2']);
    expect(await keys({ includeArchived: true })).toEqual(['k1', 'k2']);
    expect(await store.countSessions({ includeArchived: true })).toBe(2);
    await store.putSession({ ...k1, updatedAt: 5 });
    expect(await keys()).toEqual(['k2', 'k1']);
    expect(await keys({ label: 'home' })).toEqual([]);
  });

  it('keeps the session columns in step whether a patch changes only the record or a column too', async () => {
    const store = open();
    await store.putSession(makeSessionRecord('k1', { updatedAt: 10 }));
    await store.putSession(makeSessionRecord('k2', { updatedAt: 20 }));
    const keys = async (query: SessionListQuery = {}) => (await store.listSessions(query)).map((s) => s.key);
    expect(await keys()).toEqual(['k2', 'k1']);
    const patched = await store.patchSession('k1', { status: 'running', updatedAt: 30 });
    expect(patched).toMatchObject({ status: 'running', updatedAt: 30 });
    expect(await keys()).toEqual(['k1', 'k2']);
    await store.patchSession('k2', { label: 'home', updatedAt: 40 });
    expect(await keys({ label: 'home' })).toEqual(['k2']);
    expect(await keys()).toEqual(['k2', 'k1']);
    await store.patchSession('k2', { label: null });
    expect(await keys({ label: 'home' })).toEqual([]);
    const k1 = await store.getSession('k1');
    expect(await codeOf(store.patchSession('k2', { sessionId: k1!.sessionId }))).toBe('CONFLICT');
  });

  describe('transactions', () => {
    it('rolls back when the async function rejects, and the store keeps working', async () => {
      const store = open();
      await expect(
        store.transaction(async (tx) => {
          await tx.putSession(makeSessionRecord('k1'));
          await new Promise((resolve) => setTimeout(resolve, 5));
          throw new Error('later');
        }),
      ).rejects.toThrow('later');
      expect(await store.getSession('k1')).toBeUndefined();
      await store.putSession(makeSessionRecord('k2'));
      expect(await store.getSession('k2')).toBeDefined();
    });

    it('treats an error caught inside the transaction exactly like MemoryStore does', async () => {
      const scenario = async (store: Store) => {
        await store.transaction(async (tx) => {
          await tx.putSession(makeSessionRecord('outer'));
          try {
            await tx.transaction(async (inner) => {
              await inner.putSession(makeSessionRecord('inner'));
              throw new Error('inner fails');
            });
          } catch {
            // the outer function carries on
          }
          try {
            await tx.createRun(makeRunRecord('r1', 'outer'));
            await tx.createRun(makeRunRecord('r1', 'outer'));
          } catch {
            // a refused write inside a transaction does not end it
          }
          await tx.appendMessages('outer', [say('after')]);
        });
        return {
          outer: (await store.getSession('outer'))?.key,
          inner: (await store.getSession('inner'))?.key,
          run: (await store.getRun('r1'))?.runId,
          messages: await store.countMessages('outer'),
        };
      };
      const expected = await scenario(new MemoryStore());
      expect(await scenario(open())).toEqual(expected);
      expect(expected).toEqual({ outer: 'outer', inner: 'inner', run: 'r1', messages: 1 });
    });

    it('does not roll back an earlier committed transaction when a later one fails', async () => {
      const store = open();
      await store.transaction((tx) => tx.putSession(makeSessionRecord('k1')));
      await expect(
        store.transaction(async (tx) => {
          await tx.appendMessages('k1', [say('lost')]);
          await tx.appendMessages('missing', [say('x')]);
        }),
      ).rejects.toThrow(/No session "missing"/);
      expect(await store.getSession('k1')).toBeDefined();
      expect(await store.countMessages('k1')).toBe(0);
    });

    it('keeps another process out while a transaction is open, and lets it in after', async () => {
      const file = temp.file('two-process.db');
      const store = open(file);
      await store.putSession(makeSessionRecord('k1'));
      const other = openSqliteStore({ file, busyTimeoutMs: 50 });
      opened.push(other);
      let release!: () => void;
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      let wrote!: () => void;
      const written = new Promise<void>((resolve) => {
        wrote = resolve;
      });
      const open1 = store.transaction(async (tx) => {
        await tx.appendMessages('k1', [say('inside')]);
        wrote();
        await gate;
      });
      // The open transaction has written: it holds the write lock.
      await written;
      expect(await codeOf(other.appendMessages('k1', [say('other')]))).toBe('STORE_LOCKED');
      release();
      await open1;
      expect((await other.appendMessages('k1', [say('other')]))[0]?.seq).toBe(2);
    });
  });

  describe('listing sessions', () => {
    const kinds: SessionKind[] = ['main', 'dm', 'group', 'cron', 'subagent', 'other'];

    it('returns exactly what MemoryStore returns for random data and random queries', async () => {
      const next = random(7);
      const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
      const sqlite = open();
      const memory = new MemoryStore();
      const keys: string[] = [];
      for (let i = 0; i < 400; i++) {
        const key = `agent:${pick(['a', 'b', 'c'])}:s${i}`;
        keys.push(key);
        const record = makeSessionRecord(key, {
          kind: pick(kinds),
          updatedAt: T0 + Math.floor(next() * 50) * 60_000,
          ...(next() < 0.3 ? { spawnedBy: pick(keys) } : {}),
          ...(next() < 0.2 ? { archivedAt: T0 } : {}),
          ...(next() < 0.2 ? { label: pick(['ops', 'dev']) } : {}),
        });
        await sqlite.putSession(record);
        await memory.putSession(record);
      }
      const now = T0 + 50 * 60_000;
      for (let round = 0; round < 300; round++) {
        const query: SessionListQuery = { now };
        if (next() < 0.5) query.kinds = kinds.filter(() => next() < 0.35);
        if (next() < 0.4) query.activeMinutes = Math.floor(next() * 60);
        if (next() < 0.2) query.spawnedBy = pick(keys);
        if (next() < 0.3) query.agentIds = ['a', 'b', 'c'].filter(() => next() < 0.5);
        if (next() < 0.1) query.keys = keys.filter(() => next() < 0.05);
        if (next() < 0.1) query.label = pick(['ops', 'dev']);
        if (next() < 0.05) query.sessionId = `sid-${pick(keys)}`;
        if (next() < 0.3) query.includeArchived = true;
        if (next() < 0.7) query.limit = Math.floor(next() * 60);
        const label = JSON.stringify(query);
        expect(
          (await sqlite.listSessions(query)).map((s) => s.key),
          label,
        ).toEqual((await memory.listSessions(query)).map((s) => s.key));
        expect(await sqlite.countSessions(query), label).toBe(await memory.countSessions(query));
      }
      for (const label of ['ops', 'dev', 'none']) {
        for (const query of [{ label }, { label, agentIds: ['b'] }, { label, includeArchived: true }]) {
          expect(await sqlite.listSessions(query)).toEqual(await memory.listSessions(query));
        }
      }
    });
  });

  describe('readonly', () => {
    it('reads a store and refuses writes with STORE_ERROR', async () => {
      const file = temp.file('ro.db');
      const writer = open(file);
      await writer.putSession(makeSessionRecord('k1'));
      const reader = open(file, { readonly: true });
      expect(reader.readonly).toBe(true);
      expect((await reader.getSession('k1'))?.key).toBe('k1');
      expect(await codeOf(reader.putSession(makeSessionRecord('k2')))).toBe('STORE_ERROR');
      await writer.putSession(makeSessionRecord('k3'));
      expect((await reader.getSession('k3'))?.key).toBe('k3');
    });

    it('searches every committed message, also those no writer has indexed yet', async () => {
      const file = temp.file('ro-search.db');
      const writer = open(file);
      await writer.putSession(makeSessionRecord('k1'));
      await writer.appendMessages('k1', [say('harbour crane one'), say('harbour')]);
      expect((await writer.searchMessages({ text: 'harbour' })).total).toBe(2);
      // Appended after the writer's last search: the file's index does not hold these yet.
      await writer.appendMessages('k1', [say('harbour crane crane two'), say('crane')]);
      const reader = open(file, { readonly: true });
      const found = await reader.searchMessages({ text: 'harbour crane', limit: 10 });
      expect(found.total).toBe(2);
      expect(found.hits.map((h) => h.message.content).sort()).toEqual([
        'harbour crane crane two',
        'harbour crane one',
      ]);
      expect((await reader.searchMessages({ text: 'crane', keys: ['k1'], limit: 0 })).total).toBe(3);
      expect((await reader.searchMessages({ text: 'crane', keys: ['other'] })).total).toBe(0);
      // Paging runs over both indexes as one ranked list.
      const pages = [0, 1, 2].map((offset) => reader.searchMessages({ text: 'crane', limit: 1, offset }));
      const paged = (await Promise.all(pages)).flatMap((r) => r.hits.map((h) => h.message.content));
      expect(paged.sort()).toEqual(['crane', 'harbour crane crane two', 'harbour crane one']);
      // The same inside a read transaction, and nothing is counted twice once the writer caught up.
      await reader.transaction(async (tx) => {
        expect((await tx.searchMessages({ text: 'crane' })).total).toBe(3);
        expect((await tx.searchMessages({ text: 'crane' })).total).toBe(3);
      });
      expect((await writer.searchMessages({ text: 'crane' })).total).toBe(3);
      expect((await reader.searchMessages({ text: 'crane' })).total).toBe(3);
      await writer.deleteSession('k1');
      expect((await reader.searchMessages({ text: 'crane' })).total).toBe(0);
    });
  });

  describe('search index', () => {
    const words = (store: SqliteStore, text: string) =>
      store.searchMessages({ text, limit: 50 }).then((r) => r.total);

    it('finds every committed message, however and by whichever connection it was appended', async () => {
      const file = temp.file('search-complete.db');
      const store = open(file);
      const other = open(file);
      const grouped = openSqliteStore({ file, groupCommit: true });
      opened.push(grouped);
      await store.putSession(makeSessionRecord('k1'));
      let expected = 0;
      for (let round = 0; round < 3; round++) {
        await store.appendMessages('k1', [say(`alpha round${round}`)]);
        await store.appendMessages('k1', [say(`alpha round${round}`), say('beta')]);
        await store.transaction((tx) => tx.appendMessages('k1', [say(`alpha round${round}`)]));
        await other.appendMessages('k1', [say(`alpha round${round}`)]);
        await grouped.appendMessages('k1', [say(`alpha round${round}`)]);
        await grouped.flush();
        expected += 5;
        expect(await words(store, 'alpha')).toBe(expected);
        expect(await words(other, `alpha round${round}`)).toBe(5);
      }
      // Inside a transaction, a search sees the transaction's own appends, and after a rollback
      // neither those messages nor their index entries remain.
      await codeOf(
        store.transaction(async (tx) => {
          await tx.appendMessages('k1', [say('gamma')]);
          expect((await tx.searchMessages({ text: 'gamma' })).total).toBe(1);
          throw new Error('roll back');
        }),
      );
      expect(await words(store, 'gamma')).toBe(0);
      await store.appendMessages('k1', [say('gamma')]);
      expect(await words(other, 'gamma')).toBe(1);
      expect(await store.integrityCheck()).toEqual({ ok: true, problems: [] });
    });

    it('re-indexes a message whose text an update changed, also an update by a tool without the store', async () => {
      const file = temp.file('search-update.db');
      const store = open(file);
      await store.putSession(makeSessionRecord('k1'));
      await store.appendMessages('k1', [say('before words'), say('kept words')]);
      expect(await words(store, 'words')).toBe(2);
      const raw = new Database(file);
      raw
        .prepare(`UPDATE messages SET message = json_set(message, '$.content', 'after edit') WHERE seq = 1`)
        .run();
      raw.close();
      expect(await words(store, 'before')).toBe(0);
      expect(await words(store, 'after edit')).toBe(1);
      await store.setMessagePlatformId('k1', 2, 'platform-2');
      expect(await words(store, 'kept words')).toBe(1);
      expect(await store.integrityCheck()).toEqual({ ok: true, problems: [] });
    });

    it('indexes around content blocks that are not objects instead of failing the search', async () => {
      const store = open();
      await store.putSession(makeSessionRecord('k1'));
      const odd = { role: 'user', content: ['bare', { type: 'text', text: 'delta' }] } as unknown;
      await store.appendMessages('k1', [odd as TranscriptMessage, say('delta again')]);
      expect(await words(store, 'delta')).toBe(2);
    });
  });

  describe('transcript locator and JSONL export', () => {
    const seed = async (store: SqliteStore, count: number) => {
      await store.putSession(makeSessionRecord('agent:main:main', { sessionId: 'sid-1' }));
      await store.transaction(async (tx) => {
        for (let i = 1; i <= count; i++)
          await tx.appendMessages('agent:main:main', [say(`line ${i}`, T0 + i)]);
      });
    };
    const collect = async (lines: AsyncIterable<string>): Promise<string> => {
      let text = '';
      for await (const line of lines) text += line;
      return text;
    };

    it('names the file and the sessionId', async () => {
      const file = temp.file('loc.db');
      const store = open(file);
      await seed(store, 1);
      // Relative to the store's directory: no server path in what models and chats see.
      expect(await store.transcriptLocator((await store.getSession('agent:main:main'))!)).toBe(
        `sqlite:${basename(store.file)}#sid-1`,
      );
      expect(store.file).toBe(file);
    });

    it('exports one message per line, oldest first, by key, by sessionId and by locator', async () => {
      const store = open();
      await seed(store, 1234);
      const byKey = await collect(store.exportTranscriptJsonl('agent:main:main'));
      const lines = byKey.trimEnd().split('\n');
      expect(lines).toHaveLength(1234);
      expect(JSON.parse(lines[0]!)).toEqual({ ...say('line 1', T0 + 1), seq: 1 });
      expect(JSON.parse(lines[1233]!)).toMatchObject({ seq: 1234, content: 'line 1234' });
      expect(await collect(store.exportTranscriptJsonl('sid-1'))).toBe(byKey);
      const locator = await store.transcriptLocator((await store.getSession('agent:main:main'))!);
      expect(await collect(store.exportTranscriptJsonl(locator))).toBe(byKey);
    });

    it('streams into a file and writes a file directly', async () => {
      const store = open();
      await seed(store, 30);
      const chunks: string[] = [];
      for await (const chunk of Readable.from(store.exportTranscriptJsonl('agent:main:main')))
        chunks.push(chunk);
      const target = temp.file('export.jsonl');
      expect(await store.exportTranscriptJsonlToFile('agent:main:main', target)).toBe(30);
      expect(readFileSync(target, 'utf8')).toBe(chunks.join(''));
    });

    it('refuses unknown sessions and locators of another file', async () => {
      const store = open();
      await seed(store, 1);
      expect(await codeOf(collect(store.exportTranscriptJsonl('nope')))).toBe('SESSION_NOT_FOUND');
      expect(await codeOf(collect(store.exportTranscriptJsonl('sqlite:/elsewhere.db#sid-1')))).toBe(
        'INVALID_ARGUMENT',
      );
    });
  });

  describe('maintenance', () => {
    it('passes an integrity check and checkpoints the write-ahead log', async () => {
      const store = open();
      await store.putSession(makeSessionRecord('k1'));
      await store.appendMessages('k1', [say('x')]);
      expect(await store.integrityCheck()).toEqual({ ok: true, problems: [] });
      const result = await store.checkpoint();
      expect(result.busy).toBe(false);
      expect(result.checkpointedFrames).toBe(result.walFrames);
    });
  });

  describe('turn operations', () => {
    const KEY = 'agent:main:dm:ada';
    /** The stored columns of run `runId`: its record's JSON and its delivery state. */
    const runColumns = (store: SqliteStore, runId: string) =>
      (store as unknown as { sqlite: { db: Database.Database } }).sqlite.db
        .prepare('SELECT record, status, pending_delivery, delivery FROM runs WHERE run_id = ?')
        .raw()
        .get(runId);

    it('has its own, on the store and on a transaction handle', async () => {
      const store = open();
      expect(typeof store.commitInbound).toBe('function');
      expect(typeof store.endTurn).toBe('function');
      expect(typeof store.recordDeliveries).toBe('function');
      await store.transaction(async (tx) => {
        expect([typeof tx.commitInbound, typeof tx.endTurn, typeof tx.recordDeliveries]).toEqual([
          'function',
          'function',
          'function',
        ]);
      });
    });

    it("writes a turn's status and delivery marks by column, leaving the run's JSON as created", async () => {
      const store = open();
      const run = makeRunRecord('r1', KEY, { deliver: true, message: 'hello', createdAt: T0 });
      await store.commitInbound!({
        session: { create: makeSessionRecord(KEY, { kind: 'dm' }), update: { updatedAt: T0 } },
        run,
        begin: {
          input: say('hello'),
          run: { ...run, status: 'running', startedAt: T0, attempts: 1 },
          session: { status: 'running' },
        },
      });
      const [json] = runColumns(store, 'r1') as [string];
      const ended = await store.endTurn!({
        sessionKey: KEY,
        runs: [{ runId: 'r1', patch: { status: 'done', endedAt: T0 + 1, updatedAt: T0 + 1 } }],
        session: { status: 'done' },
        delivery: { runId: 'r1', plan: { kind: 'reply', text: 'ok' }, at: T0 + 1 },
      });
      expect(ended.marked).toEqual({ kind: 'reply', text: 'ok' });
      const state: DeliveryState = {
        kind: 'reply',
        status: 'delivered',
        messageId: 'p',
        messageIds: ['p'],
        at: T0 + 2,
      };
      await store.recordDeliveries!([{ runId: 'r1', sessionKey: KEY, state }]);
      expect(runColumns(store, 'r1')).toEqual([
        json,
        'done',
        JSON.stringify({ kind: 'reply', text: 'ok' }),
        JSON.stringify(state),
      ]);
      expect(await store.getRun('r1')).toMatchObject({
        status: 'done',
        startedAt: T0,
        endedAt: T0 + 1,
        attempts: 1,
        meta: { pendingDelivery: { kind: 'reply', text: 'ok' }, delivery: state },
      });
    });
  });
});
