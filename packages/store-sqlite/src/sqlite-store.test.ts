import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import {
  isColloquyError,
  MemoryStore,
  type SessionKind,
  type SessionListQuery,
  type Store,
  type TranscriptMessage,
} from '@colloquy/core';
import { makeRunRecord, makeSessionRecord } from '@colloquy/core/testing';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createTempDir } from '../test/helpers/temp-dir.js';
import { openSqliteStore } from './open-sqlite-store.js';
import type { SqliteStore } from './sqlite-store.js';

const temp = createTempDir();
afterAll(() => temp.cleanup());

const opened: SqliteStore[] = [];
afterEach(() => {
  for (const store of opened.splice(0)) store.close();
});

function open(file = temp.file('store.db'), options: { readonly?: boolean } = {}): SqliteStore {
  const store = openSqliteStore({ file, ...options });
  opened.push(store);
  return store;
}

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
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
  it('keeps everything after close and reopen', () => {
    const file = temp.file('reopen.db');
    const first = openSqliteStore({ file });
    first.putSession(makeSessionRecord('agent:main:main', { label: 'home', meta: { a: [1, { b: 'c' }] } }));
    first.appendMessages('agent:main:main', [say('one'), say('two')]);
    first.createRun(makeRunRecord('r1', 'agent:main:main'));
    first.close();

    const second = open(file);
    expect(second.getSession('agent:main:main')?.meta).toEqual({ a: [1, { b: 'c' }] });
    expect(second.readTail('agent:main:main', 10).map((m) => [m.seq, m.content])).toEqual([
      [1, 'one'],
      [2, 'two'],
    ]);
    expect(second.getRun('r1')?.status).toBe('queued');
  });

  it('omits undefined fields instead of storing them', () => {
    const store = open();
    store.putSession({ ...makeSessionRecord('k1'), label: undefined, model: 'p/m' });
    const read = store.getSession('k1')!;
    expect('label' in read).toBe(false);
    expect(read.model).toBe('p/m');
    const [stored] = store.appendMessages('k1', [{ ...say('x'), runId: undefined }]);
    expect(stored && 'runId' in stored).toBe(false);
  });

  it('stores a message the same way whether appended alone, in a batch, or inside a transaction', () => {
    const store = open();
    store.putSession(makeSessionRecord('k1'));
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
    const alone = store.appendMessages('k1', [rich]);
    const batch = store.appendMessages('k1', [rich, rich]);
    const inTransaction = store.transaction(() => store.appendMessages('k1', [rich]));
    expect([...alone, ...batch, ...inTransaction]).toEqual([1, 2, 3, 4].map((seq) => ({ ...rich, seq })));
    expect(store.readTail('k1', 10)).toEqual([...alone, ...batch, ...inTransaction]);
  });

  it('refuses a sessionId that already belongs to another session, and keeps both rows intact', () => {
    const store = open();
    store.putSession(makeSessionRecord('k1', { sessionId: 'same' }));
    expect(codeOf(() => store.putSession(makeSessionRecord('k2', { sessionId: 'same' })))).toBe('CONFLICT');
    expect(store.getSession('k2')).toBeUndefined();
    expect(store.getSessionById('same')?.key).toBe('k1');
  });

  it('refuses values that are not JSON-serialisable', () => {
    const store = open();
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(codeOf(() => store.putSession(makeSessionRecord('k1', { meta: cyclic })))).toBe(
      'INVALID_ARGUMENT',
    );
    expect(store.getSession('k1')).toBeUndefined();
  });

  it('counts messages without reading the transcript, also after a delete and a recreate', () => {
    const store = open();
    store.putSession(makeSessionRecord('k1'));
    store.transaction(() => {
      for (let i = 0; i < 1200; i++) store.appendMessages('k1', [say(`m${i}`)]);
    });
    expect(store.countMessages('k1')).toBe(1200);
    store.deleteSession('k1');
    store.putSession(makeSessionRecord('k1'));
    store.appendMessages('k1', [say('a'), say('b')]);
    expect(store.countMessages('k1')).toBe(2);
  });

  it('reads limits the way MemoryStore does: infinite means all, negatives mean none', () => {
    const sqlite = open();
    const memory = new MemoryStore();
    for (const store of [sqlite, memory] as Store[]) {
      store.putSession(makeSessionRecord('k1'));
      store.putSession(makeSessionRecord('k2', { updatedAt: T0 + 1 }));
      store.appendMessages('k1', [say('a'), say('b'), say('c')]);
      store.createRun(makeRunRecord('r1', 'k1'));
    }
    for (const limit of [Number.POSITIVE_INFINITY, Number.NaN, -3, 1.7, 0]) {
      const both = (read: (store: Store) => unknown) =>
        expect(read(sqlite), String(limit)).toEqual(read(memory));
      both((s) => s.listSessions({ limit }).map((x) => x.key));
      both((s) => s.listSessions({ kinds: ['other', 'main'], limit }).map((x) => x.key));
      if (Number.isInteger(limit) || limit === Number.POSITIVE_INFINITY) {
        both((s) => s.readTail('k1', limit).map((m) => m.seq));
      }
      both((s) => s.listRuns({ limit }).map((r) => r.runId));
      both((s) => s.listOutbox({ limit }));
    }
  });

  it('throws STORE_ERROR after close, and closing twice is harmless', () => {
    const store = openSqliteStore({ file: temp.file('closed.db') });
    store.close();
    store.close();
    expect(codeOf(() => store.getSession('k'))).toBe('STORE_ERROR');
    expect(codeOf(() => store.transaction(() => 1))).toBe('STORE_ERROR');
  });

  describe('transactions', () => {
    it('rolls back and refuses a function that returns a promise', () => {
      const store = open();
      expect(codeOf(() => store.transaction(async () => store.putSession(makeSessionRecord('k1'))))).toBe(
        'STORE_ERROR',
      );
      expect(store.getSession('k1')).toBeUndefined();
      store.putSession(makeSessionRecord('k2'));
      expect(store.getSession('k2')).toBeDefined();
    });

    it('treats an error caught inside the outer function exactly like MemoryStore does', () => {
      const scenario = (store: Store) => {
        store.transaction(() => {
          store.putSession(makeSessionRecord('outer'));
          try {
            store.transaction(() => {
              store.putSession(makeSessionRecord('inner'));
              throw new Error('inner fails');
            });
          } catch {
            // the outer function carries on
          }
          try {
            store.createRun(makeRunRecord('r1', 'outer'));
            store.createRun(makeRunRecord('r1', 'outer'));
          } catch {
            // a refused write inside a transaction does not end it
          }
          store.appendMessages('outer', [say('after')]);
        });
        return {
          outer: store.getSession('outer')?.key,
          inner: store.getSession('inner')?.key,
          run: store.getRun('r1')?.runId,
          messages: store.countMessages('outer'),
        };
      };
      const memory = new MemoryStore();
      const expected = scenario(memory);
      expect(scenario(open())).toEqual(expected);
      expect(expected).toEqual({ outer: 'outer', inner: 'inner', run: 'r1', messages: 1 });
    });

    it('does not roll back an earlier committed transaction when a later one fails', () => {
      const store = open();
      store.transaction(() => store.putSession(makeSessionRecord('k1')));
      expect(() =>
        store.transaction(() => {
          store.appendMessages('k1', [say('lost')]);
          store.appendMessages('missing', [say('x')]);
        }),
      ).toThrow(/No session "missing"/);
      expect(store.getSession('k1')).toBeDefined();
      expect(store.countMessages('k1')).toBe(0);
    });
  });

  describe('listing sessions', () => {
    const kinds: SessionKind[] = ['main', 'dm', 'group', 'cron', 'subagent', 'other'];

    it('returns exactly what MemoryStore returns for random data and random queries', () => {
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
        sqlite.putSession(record);
        memory.putSession(record);
      }
      const now = T0 + 50 * 60_000;
      for (let round = 0; round < 300; round++) {
        const query: SessionListQuery = { now };
        if (next() < 0.5) query.kinds = kinds.filter(() => next() < 0.35);
        if (next() < 0.4) query.activeMinutes = Math.floor(next() * 60);
        if (next() < 0.2) query.spawnedBy = pick(keys);
        if (next() < 0.3) query.agentIds = ['a', 'b', 'c'].filter(() => next() < 0.5);
        if (next() < 0.1) query.keys = keys.filter(() => next() < 0.05);
        if (next() < 0.3) query.includeArchived = true;
        if (next() < 0.7) query.limit = Math.floor(next() * 60);
        const label = JSON.stringify(query);
        expect(
          sqlite.listSessions(query).map((s) => s.key),
          label,
        ).toEqual(memory.listSessions(query).map((s) => s.key));
        expect(sqlite.countSessions(query), label).toBe(memory.countSessions(query));
      }
      for (const label of ['ops', 'dev', 'none']) {
        expect(sqlite.findSessionsByLabel(label)).toEqual(memory.findSessionsByLabel(label));
        expect(sqlite.findSessionsByLabel(label, 'b')).toEqual(memory.findSessionsByLabel(label, 'b'));
      }
    });
  });

  describe('readonly', () => {
    it('reads a store and refuses writes with STORE_ERROR', () => {
      const file = temp.file('ro.db');
      const writer = open(file);
      writer.putSession(makeSessionRecord('k1'));
      const reader = open(file, { readonly: true });
      expect(reader.readonly).toBe(true);
      expect(reader.getSession('k1')?.key).toBe('k1');
      expect(codeOf(() => reader.putSession(makeSessionRecord('k2')))).toBe('STORE_ERROR');
      writer.putSession(makeSessionRecord('k3'));
      expect(reader.getSession('k3')?.key).toBe('k3');
    });
  });

  describe('transcript locator and JSONL export', () => {
    const seed = (store: SqliteStore, count: number) => {
      store.putSession(makeSessionRecord('agent:main:main', { sessionId: 'sid-1' }));
      store.transaction(() => {
        for (let i = 1; i <= count; i++) store.appendMessages('agent:main:main', [say(`line ${i}`, T0 + i)]);
      });
    };

    it('names the file and the sessionId', () => {
      const file = temp.file('loc.db');
      const store = open(file);
      seed(store, 1);
      expect(store.transcriptLocator(store.getSession('agent:main:main')!)).toBe(
        `sqlite:${store.file}#sid-1`,
      );
      expect(store.file).toBe(file);
    });

    it('exports one message per line, oldest first, by key, by sessionId and by locator', () => {
      const store = open();
      seed(store, 1234);
      const byKey = [...store.exportTranscriptJsonl('agent:main:main')].join('');
      const lines = byKey.trimEnd().split('\n');
      expect(lines).toHaveLength(1234);
      expect(JSON.parse(lines[0]!)).toEqual({ ...say('line 1', T0 + 1), seq: 1 });
      expect(JSON.parse(lines[1233]!)).toMatchObject({ seq: 1234, content: 'line 1234' });
      expect([...store.exportTranscriptJsonl('sid-1')].join('')).toBe(byKey);
      const locator = store.transcriptLocator(store.getSession('agent:main:main')!);
      expect([...store.exportTranscriptJsonl(locator)].join('')).toBe(byKey);
    });

    it('streams into a file and writes a file directly', async () => {
      const store = open();
      seed(store, 30);
      const chunks: string[] = [];
      for await (const chunk of Readable.from(store.exportTranscriptJsonl('agent:main:main')))
        chunks.push(chunk);
      const target = temp.file('export.jsonl');
      expect(store.exportTranscriptJsonlToFile('agent:main:main', target)).toBe(30);
      expect(readFileSync(target, 'utf8')).toBe(chunks.join(''));
    });

    it('refuses unknown sessions at once, and locators of another file', () => {
      const store = open();
      seed(store, 1);
      expect(codeOf(() => store.exportTranscriptJsonl('nope'))).toBe('SESSION_NOT_FOUND');
      expect(codeOf(() => store.exportTranscriptJsonl('sqlite:/elsewhere.db#sid-1'))).toBe(
        'INVALID_ARGUMENT',
      );
    });
  });

  describe('maintenance', () => {
    it('passes an integrity check and checkpoints the write-ahead log', () => {
      const store = open();
      store.putSession(makeSessionRecord('k1'));
      store.appendMessages('k1', [say('x')]);
      expect(store.integrityCheck()).toEqual({ ok: true, problems: [] });
      const result = store.checkpoint();
      expect(result.busy).toBe(false);
      expect(result.checkpointedFrames).toBe(result.walFrames);
    });
  });
});
