import { existsSync, statSync } from 'node:fs';
import type { Worker } from 'node:worker_threads';
import { isColloquyError, type Logger } from '@colloquy/core';
import { makeSessionRecord } from '@colloquy/testkit';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { createTempDir } from '../test/helpers/temp-dir.js';
import { openSqliteStore } from './open-sqlite-store.js';
import type { SqliteStore } from './sqlite-store.js';
import { pendingWalFrames, readWalIndex } from './wal-index.js';

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
  it('copies the log on the worker, and a writer after a complete copy starts the log over', async () => {
    const file = temp.file('bg.db');
    const logger = recordingLogger();
    // No autocheckpoint on the main connection: whatever is copied, the worker copied.
    const store = openSqliteStore({
      file,
      logger,
      groupCommit: true,
      walAutocheckpointPages: 0,
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
    const copied = logger.entries.filter((e) => isCheckpoint(e) && Number(e.fields.checkpointedFrames) > 0);
    expect(copied.length).toBeGreaterThanOrEqual(rounds);
    // Each round's commit began after the worker had copied the whole log, so it wrote from the log's
    // start again: the file never held more than a round or two.
    expect(largestWal).toBeLessThan(rounds * 200_000 * 0.2);
    await store.close();
    expect(existsSync(`${file}-wal`)).toBe(false);

    const reopened = openSqliteStore({ file });
    expect(await reopened.countMessages(KEY)).toBe(rounds * 200);
    expect((await reopened.integrityCheck()).ok).toBe(true);
    await reopened.close();
  });

  it('copies while writes keep coming, and the log starts over once it reaches walAutocheckpointPages', async () => {
    const file = temp.file('steady.db');
    const logger = recordingLogger();
    const store = openSqliteStore({
      file,
      logger,
      groupCommit: true,
      walAutocheckpointPages: 400,
      backgroundCheckpoint: { intervalMs: 5, minFrames: 0 },
    });
    await store.putSession(makeSessionRecord(KEY));
    const rounds = 300;
    let previous = 0;
    let restarts = 0;
    for (let round = 0; round < rounds; round++) {
      await writeBatch(store, round, 50);
      await store.flush(); // the batch commits at the end of the event-loop turn
      await new Promise((resolve) => setTimeout(resolve, 1)); // the gaps between a runtime's turns
      const logFrames = readWalIndex(file)?.logFrames ?? 0;
      if (logFrames < previous) restarts += 1;
      previous = logFrames;
    }
    // The worker copied frames while the main connection committed (the commits never checkpoint)...
    const copies = logger.entries.filter((e) => isCheckpoint(e) && Number(e.fields.checkpointedFrames) > 0);
    expect(copies.length).toBeGreaterThan(10);
    // ...and once a copy reported 400 pages or more, the main connection copied the rest between two
    // commits, so the next one started the log over. The rounds wrote about 2,400 pages of log: without
    // that step, a log written this steadily never starts over (0 restarts).
    expect(restarts).toBeGreaterThanOrEqual(3);
    expect(logger.entries.filter((e) => e.level === 'warn' || e.level === 'error')).toEqual([]);
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

  it('falls back to checkpoints in the commits when the worker dies', async () => {
    const file = temp.file('lost.db');
    const logger = recordingLogger();
    const store = openSqliteStore({ file, logger, walAutocheckpointPages: 100, backgroundCheckpoint: true });
    const internals = store as unknown as {
      checkpointer: { worker: Worker };
      sqlite: { db: Database.Database };
    };
    // While the worker lives, the commits never checkpoint.
    expect(internals.sqlite.db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    const lost = logger.waitFor((e) => e.level === 'error');
    await internals.checkpointer.worker.terminate();
    expect((await lost).msg).toMatch(/wal_autocheckpoint/);
    expect(internals.sqlite.db.pragma('wal_autocheckpoint', { simple: true })).toBe(100);
    await store.putSession(makeSessionRecord(KEY));
    for (let round = 0; round < 20; round++) await writeBatch(store, round, 100);
    // About 2 MB written; the commits' own checkpoints kept the log near 100 pages.
    expect(statSync(`${file}-wal`).size).toBeLessThan(4 * 100 * 4120);
    await store.close();
  });
});
