import { existsSync, statSync } from 'node:fs';
import type { Worker } from 'node:worker_threads';
import { isColloquyError, type Logger } from '@colloquy/core';
import { makeSessionRecord } from '@colloquy/testkit';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { createTempDir } from '../test/helpers/temp-dir.js';
import { openSqliteStore } from './open-sqlite-store.js';
import type { SqliteStore } from './sqlite-store.js';
import { pendingWalFrames } from './wal-index.js';

const temp = createTempDir('colloquy-sqlite-ckpt-');
afterAll(() => temp.cleanup());

interface Entry {
  level: string;
  fields: Record<string, unknown>;
  msg: string | undefined;
}

/** A logger that keeps its entries and lets a test wait for one. */
function recordingLogger(): Logger & {
  entries: Entry[];
  waitFor: (match: (e: Entry) => boolean) => Promise<Entry>;
} {
  const entries: Entry[] = [];
  const waiters: { match: (e: Entry) => boolean; resolve: (e: Entry) => void }[] = [];
  const log = (level: string) => (obj: object | string, msg?: string) => {
    const entry: Entry =
      typeof obj === 'string'
        ? { level, fields: {}, msg: obj }
        : { level, fields: obj as Record<string, unknown>, msg };
    entries.push(entry);
    for (const waiter of waiters.splice(0)) {
      if (waiter.match(entry)) waiter.resolve(entry);
      else waiters.push(waiter);
    }
  };
  const logger = {
    entries,
    debug: log('debug'),
    info: log('info'),
    warn: log('warn'),
    error: log('error'),
    child: () => logger,
    waitFor: (match: (e: Entry) => boolean) =>
      new Promise<Entry>((resolve) => waiters.push({ match, resolve })),
  };
  return logger;
}

const isCheckpoint = (e: Entry) => e.msg === 'background checkpoint';
const isComplete = (e: Entry) =>
  isCheckpoint(e) && e.fields.walFrames === e.fields.checkpointedFrames && e.fields.busy === false;

const KEY = 'agent:main:main';
const BODY = 'x'.repeat(1000);

/** Appends `count` messages of about 1 KB in one transaction. */
async function writeBatch(store: SqliteStore, round: number, count: number): Promise<void> {
  await store.appendMessages(
    KEY,
    Array.from({ length: count }, (_, i) => ({
      role: 'user' as const,
      content: `${round}-${i} ${BODY}`,
      timestamp: i,
    })),
  );
}

function expectInvalid(fn: () => unknown, pattern: RegExp): void {
  try {
    fn();
  } catch (error) {
    expect(isColloquyError(error) && error.code).toBe('INVALID_ARGUMENT');
    expect((error as Error).message).toMatch(pattern);
    return;
  }
  throw new Error('expected INVALID_ARGUMENT, nothing was thrown');
}

describe('backgroundCheckpoint option checks', () => {
  it('refuses readonly, :memory: and bad settings', async () => {
    const file = temp.file('ro.db');
    await openSqliteStore({ file }).close();
    expectInvalid(() => openSqliteStore({ file, readonly: true, backgroundCheckpoint: true }), /readonly/);
    expectInvalid(() => openSqliteStore({ file: ':memory:', backgroundCheckpoint: true }), /:memory:/);
    expectInvalid(() => openSqliteStore({ file, backgroundCheckpoint: { intervalMs: 0 } }), /intervalMs/);
    expectInvalid(() => openSqliteStore({ file, backgroundCheckpoint: { intervalMs: 1.5 } }), /intervalMs/);
    expectInvalid(() => openSqliteStore({ file, backgroundCheckpoint: { minFrames: -1 } }), /minFrames/);
    // false is off, and the file opens as usual
    await openSqliteStore({ file, backgroundCheckpoint: false }).close();
  });
});

describe('pendingWalFrames', () => {
  it('reads the frames waiting to be copied from the wal-index', () => {
    const file = temp.file('index.db');
    expect(pendingWalFrames(file)).toBeUndefined();
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.pragma('wal_autocheckpoint = 0');
    db.exec('CREATE TABLE t (v TEXT)');
    const insert = db.prepare('INSERT INTO t VALUES (?)');
    for (let i = 0; i < 50; i++) insert.run(BODY.repeat(4));
    const [before] = db.pragma('wal_checkpoint(PASSIVE)') as { log: number; checkpointed: number }[];
    expect(before!.log).toBeGreaterThan(50);
    expect(pendingWalFrames(file)).toBe(0);
    for (let i = 0; i < 10; i++) insert.run(BODY);
    // The next writer started the log over: only the new frames wait.
    const pending = pendingWalFrames(file);
    expect(pending).toBeGreaterThanOrEqual(10);
    expect(pending).toBeLessThan(before!.log);
    db.close();
  });
});

describe('backgroundCheckpoint', () => {
  it('checkpoints on the worker while the main connection writes, and the WAL stays bounded', async () => {
    const file = temp.file('bg.db');
    const logger = recordingLogger();
    const store = openSqliteStore({
      file,
      logger,
      groupCommit: true,
      backgroundCheckpoint: { intervalMs: 10, minFrames: 0 },
    });
    await store.putSession(makeSessionRecord(KEY));
    const rounds = 30;
    let largestWal = 0;
    for (let round = 0; round < rounds; round++) {
      const complete = logger.waitFor(isComplete);
      await writeBatch(store, round, 200); // about 200 KB, 50+ pages
      await store.flush();
      await complete;
      largestWal = Math.max(largestWal, statSync(`${file}-wal`).size);
    }
    // The main connection never checkpoints (wal_autocheckpoint = 0), yet the worker copied frames
    // and each next commit started the log over: it never held more than a few rounds.
    const copied = logger.entries.filter((e) => isCheckpoint(e) && Number(e.fields.checkpointedFrames) > 0);
    expect(copied.length).toBeGreaterThan(0);
    expect(largestWal).toBeLessThan(rounds * 200_000 * 0.2);
    await store.close();
    expect(existsSync(`${file}-wal`)).toBe(false);

    const reopened = openSqliteStore({ file });
    expect(await reopened.countMessages(KEY)).toBe(rounds * 200);
    expect((await reopened.integrityCheck()).ok).toBe(true);
    await reopened.close();
  });

  it('keeps the WAL bounded while writes keep coming', async () => {
    const file = temp.file('steady.db');
    const logger = recordingLogger();
    const store = openSqliteStore({
      file,
      logger,
      groupCommit: true,
      backgroundCheckpoint: { intervalMs: 50, minFrames: 0 },
    });
    await store.putSession(makeSessionRecord(KEY));
    // Write back to back (commits land while the worker copies) until it has tried 10 RESTARTs.
    let restarts = 0;
    let rounds = 0;
    let largestWal = 0;
    const counted = (e: Entry) => {
      if (isCheckpoint(e) && e.fields.mode === 'RESTART') restarts += 1;
      return false;
    };
    void logger.waitFor(counted);
    // Capped, so a worker that never checkpoints fails the test instead of filling the disk.
    while ((restarts < 10 || rounds < 30) && rounds < 2000) {
      await writeBatch(store, rounds, 50);
      await store.flush(); // the batch commits at the end of the event-loop turn
      await new Promise((resolve) => setTimeout(resolve, 1)); // the gaps between a runtime's turns
      rounds += 1;
      largestWal = Math.max(largestWal, statSync(`${file}-wal`).size);
    }
    expect(restarts).toBeGreaterThanOrEqual(10);
    // Every round rewrites the same index pages: without resets the log holds them all.
    expect(largestWal).toBeLessThan(rounds * 50_000 * 0.5);
    await store.close();
    const reopened = openSqliteStore({ file });
    expect(await reopened.countMessages(KEY)).toBe(rounds * 50);
    await reopened.close();
  });

  it('without it and without autocheckpoint, the same writes grow the WAL (the bound above is real)', async () => {
    const file = temp.file('control.db');
    const store = openSqliteStore({ file, walAutocheckpointPages: 0 });
    await store.putSession(makeSessionRecord(KEY));
    for (let round = 0; round < 30; round++) await writeBatch(store, round, 200);
    expect(statSync(`${file}-wal`).size).toBeGreaterThan(30 * 200_000 * 0.5);
    await store.close();
  });

  it('closes with a checkpoint in flight and keeps every write', async () => {
    const file = temp.file('inflight.db');
    const logger = recordingLogger();
    const store = openSqliteStore({ file, logger, backgroundCheckpoint: { intervalMs: 1, minFrames: 0 } });
    await store.putSession(makeSessionRecord(KEY));
    const first = logger.waitFor(isCheckpoint);
    for (let round = 0; round < 10; round++) await writeBatch(store, round, 500);
    await first;
    const writes = Array.from({ length: 5 }, (_, round) => writeBatch(store, 10 + round, 200));
    await Promise.all([store.close(), ...writes]);
    expect(existsSync(`${file}-wal`)).toBe(false);
    expect(logger.entries.filter((e) => e.level === 'error')).toEqual([]);

    const reopened = openSqliteStore({ file });
    expect(await reopened.countMessages(KEY)).toBe(10 * 500 + 5 * 200);
    await reopened.close();
  });

  it('falls back to wal_autocheckpoint on the main connection when the worker dies', async () => {
    const file = temp.file('lost.db');
    const logger = recordingLogger();
    const store = openSqliteStore({ file, logger, walAutocheckpointPages: 500, backgroundCheckpoint: true });
    const internals = store as unknown as {
      checkpointer: { worker: Worker };
      sqlite: { db: Database.Database };
    };
    expect(internals.sqlite.db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    const lost = logger.waitFor((e) => e.level === 'error');
    await internals.checkpointer.worker.terminate();
    expect((await lost).msg).toMatch(/wal_autocheckpoint/);
    expect(internals.sqlite.db.pragma('wal_autocheckpoint', { simple: true })).toBe(500);
    await store.putSession(makeSessionRecord(KEY));
    await store.close();
  });
});
