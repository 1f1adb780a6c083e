import { setImmediate as nextTurn } from 'node:timers/promises';
import { isColloquyError, type Logger, type TranscriptMessage } from '@colloquy/core';
import { makeSessionRecord } from '@colloquy/core/testing';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createTempDir } from '../test/helpers/temp-dir.js';
import { resolveGroupCommit } from './group-commit.js';
import { openSqliteStore, type SqliteStoreOptions } from './open-sqlite-store.js';
import type { SqliteStore } from './sqlite-store.js';

const temp = createTempDir('colloquy-group-');
afterAll(() => temp.cleanup());

const opened: SqliteStore[] = [];
afterEach(() => {
  for (const store of opened.splice(0)) {
    try {
      store.close();
    } catch {
      // a test may leave a store whose last commit fails on purpose
    }
  }
});

function open(file: string, options: Omit<SqliteStoreOptions, 'file'> = {}): SqliteStore {
  const store = openSqliteStore({ file, ...options });
  opened.push(store);
  return store;
}

/** A group-commit store plus a second, readonly connection that sees committed data only. */
function openPair(options: SqliteStoreOptions['groupCommit'] = true) {
  const file = temp.file('group.db');
  const store = open(file, { groupCommit: options });
  store.putSession(makeSessionRecord('k1'));
  store.close();
  opened.pop();
  const writer = open(file, { groupCommit: options });
  const reader = open(file, { readonly: true });
  return { file, writer, reader };
}

const say = (text: string): TranscriptMessage => ({ role: 'user', content: text, timestamp: 1 });
const texts = (store: SqliteStore, key = 'k1') => store.readTail(key, 100).map((m) => m.content);

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return undefined;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject');
}

/**
 * Adds a table whose foreign key SQLite checks only at COMMIT, and a trigger that breaks it
 * whenever a transcript message says "poison": a transaction that appends one passes every
 * statement and fails at its commit, as a real commit-time failure does.
 */
function addCommitTimeTrap(file: string): void {
  const db = new Database(file);
  db.exec(`
    CREATE TABLE trap (session_key TEXT REFERENCES sessions (key) DEFERRABLE INITIALLY DEFERRED);
    CREATE TRIGGER trap_on_poison AFTER INSERT ON messages
      WHEN json_extract(NEW.message, '$.content') = 'poison'
      BEGIN INSERT INTO trap VALUES ('no such session'); END;
  `);
  db.close();
}

function recordingLogger(): { logger: Logger; errors: unknown[] } {
  const errors: unknown[] = [];
  const logger: Logger = {
    debug: () => {},
    info: () => {},
    warn: () => {},
    error: (obj) => {
      errors.push(obj);
    },
    child: () => logger,
  };
  return { logger, errors };
}

describe('group commit', () => {
  it('shares one commit among the writes of an event-loop turn: visible here at once, elsewhere after flush', async () => {
    const { writer, reader } = openPair();
    writer.transaction(() => writer.appendMessages('k1', [say('one'), say('two')]));
    writer.appendMessages('k1', [say('three')]);
    writer.patchSession('k1', { label: 'batched' });

    expect(texts(writer)).toEqual(['one', 'two', 'three']);
    expect(writer.getSession('k1')?.label).toBe('batched');
    expect(reader.countMessages('k1')).toBe(0);

    await writer.flush();
    expect(texts(reader)).toEqual(['one', 'two', 'three']);
    expect(reader.getSession('k1')?.label).toBe('batched');
    await expect(writer.flush()).resolves.toBeUndefined();
  });

  it('commits at the end of the turn even when nobody flushes', async () => {
    const { writer, reader } = openPair();
    writer.appendMessages('k1', [say('unflushed')]);
    await nextTurn();
    await nextTurn();
    expect(texts(reader)).toEqual(['unflushed']);
  });

  it('rolls back only the failing transaction of a batch', async () => {
    const { file, writer, reader } = openPair();
    writer.appendMessages('k1', [say('before')]);
    expect(() =>
      writer.transaction(() => {
        writer.putSession(makeSessionRecord('k2'));
        writer.appendMessages('k1', [say('lost')]);
        throw new Error('boom');
      }),
    ).toThrow('boom');
    const conflict = thrown(() =>
      writer.transaction(() => {
        writer.appendMessages('k1', [say('lost too')]);
        writer.putSession({ ...makeSessionRecord('k3'), sessionId: 'sid-k1' });
      }),
    );
    expect(isColloquyError(conflict) && conflict.code).toBe('CONFLICT');
    expect(
      isColloquyError(
        thrown(() => writer.transaction(async () => writer.putSession(makeSessionRecord('k4')))),
      ),
    ).toBe(true);
    writer.transaction(() => writer.appendMessages('k1', [say('after')]));

    const expectState = (store: SqliteStore) => {
      expect(texts(store)).toEqual(['before', 'after']);
      expect(store.readTail('k1', 2).map((m) => m.seq)).toEqual([1, 2]);
      expect(store.listSessions().map((s) => s.key)).toEqual(['k1']);
    };
    expectState(writer);
    await writer.flush();
    expectState(reader);
    writer.close();
    expectState(open(file));
  });

  it('rejects flush when the commit fails, rolls the batch back and refuses writes until reopened', async () => {
    const { file, writer: setup } = openPair();
    setup.close();
    addCommitTimeTrap(file);
    const { logger, errors } = recordingLogger();
    const writer = open(file, { groupCommit: true, logger });
    const reader = open(file, { readonly: true });
    writer.appendMessages('k1', [say('durable')]);
    await writer.flush();

    // Both calls return: the broken foreign key is only checked when the batch commits.
    writer.appendMessages('k1', [say('fine')]);
    writer.transaction(() => writer.appendMessages('k1', [say('poison')]));
    const first = writer.flush();
    const second = writer.flush();

    const failure = await rejection(first);
    expect(await rejection(second)).toBe(failure);
    expect(isColloquyError(failure) && failure.code).toBe('STORE_ERROR');
    expect(isColloquyError(failure) && failure.details).toMatchObject({
      lostTransactions: 2,
      sqliteCode: 'SQLITE_CONSTRAINT_FOREIGNKEY',
      file,
    });
    expect((failure as Error).message).toContain('never became durable');
    expect((failure as Error).message).toContain('open it again');
    expect(errors).toHaveLength(1);

    // Nothing of the batch is left, here or on disk, and nothing later can claim to be durable.
    expect(texts(writer)).toEqual(['durable']);
    expect(texts(reader)).toEqual(['durable']);
    expect(await rejection(writer.flush())).toBe(failure);
    expect(thrown(() => writer.appendMessages('k1', [say('refused')]))).toBe(failure);
    expect(thrown(() => writer.transaction(() => 1))).toBe(failure);
    writer.close();
    expect(texts(open(file, { groupCommit: true }))).toEqual(['durable']);
  });

  it('fails the same commit without group commit, in the call that wrote it', () => {
    const { file, writer: setup } = openPair();
    setup.close();
    addCommitTimeTrap(file);
    const store = open(file);
    const failure = thrown(() => store.transaction(() => store.appendMessages('k1', [say('poison')])));
    expect(isColloquyError(failure) && failure.details.sqliteCode).toBe('SQLITE_CONSTRAINT_FOREIGNKEY');
    store.appendMessages('k1', [say('fine')]);
    expect(texts(store)).toEqual(['fine']);
  });

  it('commits inside the call that fills the batch to maxTransactions', () => {
    const { writer, reader } = openPair({ maxTransactions: 3 });
    writer.appendMessages('k1', [say('1')]);
    writer.transaction(() => writer.appendMessages('k1', [say('2')]));
    expect(reader.countMessages('k1')).toBe(0);
    writer.appendMessages('k1', [say('3')]);
    expect(reader.countMessages('k1')).toBe(3);
    writer.appendMessages('k1', [say('4')]);
    expect(reader.countMessages('k1')).toBe(3);
  });

  it('keeps a batch open for maxDelayMs', async () => {
    const { writer, reader } = openPair({ maxDelayMs: 40 });
    const started = performance.now();
    writer.appendMessages('k1', [say('late')]);
    await nextTurn();
    expect(reader.countMessages('k1')).toBe(0);
    await writer.flush();
    // Timers may fire up to a millisecond early.
    expect(performance.now() - started).toBeGreaterThanOrEqual(38);
    expect(texts(reader)).toEqual(['late']);
  });

  it('commits the open batch on close and checkpoint, settling pending flushes', async () => {
    const { file, writer, reader } = openPair({ maxDelayMs: 60_000 });
    writer.appendMessages('k1', [say('checkpointed')]);
    const beforeCheckpoint = writer.flush();
    expect(writer.checkpoint().busy).toBe(false);
    await beforeCheckpoint;
    expect(texts(reader)).toEqual(['checkpointed']);

    writer.appendMessages('k1', [say('closed')]);
    const beforeClose = writer.flush();
    writer.close();
    await beforeClose;
    expect(texts(open(file))).toEqual(['checkpointed', 'closed']);
    expect(isColloquyError(await rejection(writer.flush()))).toBe(true);
  });

  it('resolves flush at once without group commit, where every write commits before it returns', async () => {
    const file = temp.file('plain.db');
    const store = open(file);
    const reader = open(file, { readonly: true });
    store.putSession(makeSessionRecord('k1'));
    expect(reader.getSession('k1')).toBeDefined();
    await expect(store.flush()).resolves.toBeUndefined();
    expect(store.groupCommit).toBeUndefined();
  });

  it('validates its options', () => {
    expect(resolveGroupCommit(undefined)).toBeUndefined();
    expect(resolveGroupCommit(false)).toBeUndefined();
    expect(resolveGroupCommit(true)).toEqual({ maxDelayMs: 0, maxTransactions: 1000 });
    expect(resolveGroupCommit({ maxDelayMs: 2 })).toEqual({ maxDelayMs: 2, maxTransactions: 1000 });
    for (const bad of [{ maxDelayMs: -1 }, { maxDelayMs: Number.NaN }, { maxTransactions: 0 }]) {
      const error = thrown(() => resolveGroupCommit(bad));
      expect(isColloquyError(error) && error.code, JSON.stringify(bad)).toBe('INVALID_ARGUMENT');
    }
    const { file } = openPair();
    const readonly = thrown(() => openSqliteStore({ file, readonly: true, groupCommit: true }));
    expect(isColloquyError(readonly) && readonly.code).toBe('INVALID_ARGUMENT');
  });
});
