import { setImmediate as nextTurn } from 'node:timers/promises';
import { isColloquyError, type Logger, type TranscriptMessage } from '@colloquy/core';
import { makeSessionRecord } from '@colloquy/testkit';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createTempDir } from '../test/helpers/temp-dir.js';
import { resolveGroupCommit } from './group-commit.js';
import { openSqliteStore, type SqliteStoreOptions } from './open-sqlite-store.js';
import type { SqliteStore } from './sqlite-store.js';

const temp = createTempDir('colloquy-group-');
afterAll(() => temp.cleanup());

const opened: SqliteStore[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) {
    try {
      await store.close();
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
async function openPair(options: SqliteStoreOptions['groupCommit'] = true) {
  const file = temp.file('group.db');
  const store = open(file, { groupCommit: options });
  await store.putSession(makeSessionRecord('k1'));
  await store.close();
  opened.pop();
  const writer = open(file, { groupCommit: options });
  const reader = open(file, { readonly: true });
  return { file, writer, reader };
}

const say = (text: string): TranscriptMessage => ({ role: 'user', content: text, timestamp: 1 });
const texts = async (store: SqliteStore, key = 'k1') =>
  (await store.readTail(key, 100)).map((m) => m.content);

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
    const { writer, reader } = await openPair();
    await writer.transaction((tx) => tx.appendMessages('k1', [say('one'), say('two')]));
    await writer.appendMessages('k1', [say('three')]);
    await writer.patchSession('k1', { label: 'batched' });

    expect(await texts(writer)).toEqual(['one', 'two', 'three']);
    expect((await writer.getSession('k1'))?.label).toBe('batched');
    expect(await reader.countMessages('k1')).toBe(0);

    await writer.flush();
    expect(await texts(reader)).toEqual(['one', 'two', 'three']);
    expect((await reader.getSession('k1'))?.label).toBe('batched');
    await expect(writer.flush()).resolves.toBeUndefined();
  });

  it('commits at the end of the turn even when nobody flushes', async () => {
    const { writer, reader } = await openPair();
    await writer.appendMessages('k1', [say('unflushed')]);
    await nextTurn();
    await nextTurn();
    expect(await texts(reader)).toEqual(['unflushed']);
  });

  it('rolls back only the failing transaction of a batch', async () => {
    const { file, writer, reader } = await openPair();
    await writer.appendMessages('k1', [say('before')]);
    await expect(
      writer.transaction(async (tx) => {
        await tx.putSession(makeSessionRecord('k2'));
        await tx.appendMessages('k1', [say('lost')]);
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    const conflict = await rejection(
      writer.transaction(async (tx) => {
        await tx.appendMessages('k1', [say('lost too')]);
        await tx.putSession({ ...makeSessionRecord('k3'), sessionId: 'sid-k1' });
      }),
    );
    expect(isColloquyError(conflict) && conflict.code).toBe('CONFLICT');
    await writer.transaction((tx) => tx.appendMessages('k1', [say('after')]));

    const expectState = async (store: SqliteStore) => {
      expect(await texts(store)).toEqual(['before', 'after']);
      expect((await store.readTail('k1', 2)).map((m) => m.seq)).toEqual([1, 2]);
      expect((await store.listSessions()).map((s) => s.key)).toEqual(['k1']);
    };
    await expectState(writer);
    await writer.flush();
    await expectState(reader);
    await writer.close();
    await expectState(open(file));
  });

  it('never commits a batch in the middle of an open transaction', async () => {
    const { writer, reader } = await openPair();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const open1 = writer.transaction(async (tx) => {
      await tx.appendMessages('k1', [say('half')]);
      await gate;
      await tx.appendMessages('k1', [say('whole')]);
    });
    // Several event-loop turns pass while the transaction waits: the batch is due but must wait.
    for (let i = 0; i < 5; i++) await nextTurn();
    expect(await reader.countMessages('k1')).toBe(0);
    release();
    await open1;
    await writer.flush();
    expect(await texts(reader)).toEqual(['half', 'whole']);
  });

  it('rejects flush when the commit fails, rolls the batch back and refuses writes until reopened', async () => {
    const { file, writer: setup } = await openPair();
    await setup.close();
    addCommitTimeTrap(file);
    const { logger, errors } = recordingLogger();
    const writer = open(file, { groupCommit: true, logger });
    const reader = open(file, { readonly: true });
    await writer.appendMessages('k1', [say('durable')]);
    await writer.flush();

    // Both calls return: the broken foreign key is only checked when the batch commits.
    await writer.appendMessages('k1', [say('fine')]);
    await writer.transaction((tx) => tx.appendMessages('k1', [say('poison')]));
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
    expect(await texts(writer)).toEqual(['durable']);
    expect(await texts(reader)).toEqual(['durable']);
    expect(await rejection(writer.flush())).toBe(failure);
    expect(await rejection(writer.appendMessages('k1', [say('refused')]))).toBe(failure);
    expect(await rejection(writer.transaction(async () => 1))).toBe(failure);
    await writer.close();
    expect(await texts(open(file, { groupCommit: true }))).toEqual(['durable']);
  });

  it('fails the same commit without group commit, in the call that wrote it', async () => {
    const { file, writer: setup } = await openPair();
    await setup.close();
    addCommitTimeTrap(file);
    const store = open(file);
    const failure = await rejection(store.transaction((tx) => tx.appendMessages('k1', [say('poison')])));
    expect(isColloquyError(failure) && failure.details.sqliteCode).toBe('SQLITE_CONSTRAINT_FOREIGNKEY');
    await store.appendMessages('k1', [say('fine')]);
    expect(await texts(store)).toEqual(['fine']);
  });

  it('commits inside the call that fills the batch to maxTransactions', async () => {
    const { writer, reader } = await openPair({ maxTransactions: 3 });
    await writer.appendMessages('k1', [say('1')]);
    await writer.transaction((tx) => tx.appendMessages('k1', [say('2')]));
    expect(await reader.countMessages('k1')).toBe(0);
    await writer.appendMessages('k1', [say('3')]);
    expect(await reader.countMessages('k1')).toBe(3);
    await writer.appendMessages('k1', [say('4')]);
    expect(await reader.countMessages('k1')).toBe(3);
  });

  it('keeps a batch open for maxDelayMs', async () => {
    const { writer, reader } = await openPair({ maxDelayMs: 40 });
    const started = performance.now();
    await writer.appendMessages('k1', [say('late')]);
    await nextTurn();
    expect(await reader.countMessages('k1')).toBe(0);
    await writer.flush();
    // Timers may fire up to a millisecond early.
    expect(performance.now() - started).toBeGreaterThanOrEqual(38);
    expect(await texts(reader)).toEqual(['late']);
  });

  it('commits the open batch on close and checkpoint, settling pending flushes', async () => {
    const { file, writer, reader } = await openPair({ maxDelayMs: 60_000 });
    await writer.appendMessages('k1', [say('checkpointed')]);
    const beforeCheckpoint = writer.flush();
    expect((await writer.checkpoint()).busy).toBe(false);
    await beforeCheckpoint;
    expect(await texts(reader)).toEqual(['checkpointed']);

    await writer.appendMessages('k1', [say('closed')]);
    const beforeClose = writer.flush();
    await writer.close();
    await beforeClose;
    expect(await texts(open(file))).toEqual(['checkpointed', 'closed']);
    expect(isColloquyError(await rejection(writer.flush()))).toBe(true);
  });

  it('resolves flush at once without group commit, where every write commits before it returns', async () => {
    const file = temp.file('plain.db');
    const store = open(file);
    const reader = open(file, { readonly: true });
    await store.putSession(makeSessionRecord('k1'));
    expect(await reader.getSession('k1')).toBeDefined();
    await expect(store.flush()).resolves.toBeUndefined();
    expect(store.groupCommit).toBeUndefined();
  });

  it('validates its options', async () => {
    expect(resolveGroupCommit(undefined)).toBeUndefined();
    expect(resolveGroupCommit(false)).toBeUndefined();
    expect(resolveGroupCommit(true)).toEqual({ maxDelayMs: 0, maxTransactions: 1000 });
    expect(resolveGroupCommit({ maxDelayMs: 2 })).toEqual({ maxDelayMs: 2, maxTransactions: 1000 });
    for (const bad of [{ maxDelayMs: -1 }, { maxDelayMs: Number.NaN }, { maxTransactions: 0 }]) {
      const error = thrown(() => resolveGroupCommit(bad));
      expect(isColloquyError(error) && error.code, JSON.stringify(bad)).toBe('INVALID_ARGUMENT');
    }
    const { file } = await openPair();
    const readonly = thrown(() => openSqliteStore({ file, readonly: true, groupCommit: true }));
    expect(isColloquyError(readonly) && readonly.code).toBe('INVALID_ARGUMENT');
  });
});
