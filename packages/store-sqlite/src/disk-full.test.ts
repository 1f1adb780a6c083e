import { existsSync, statSync } from 'node:fs';
import type { Logger } from '@colloquy/core';
import { makeSessionRecord } from '@colloquy/testkit';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createTempDir } from '../test/helpers/temp-dir.js';
import {
  createWriterSessions,
  expectAcknowledgedKept,
  isDiskFull,
  writeUntilRefused,
} from '../test/helpers/write-load.js';
import { type DiskSpaceOptions, resolveDiskSpace } from './disk-space.js';
import { resolveGroupCommit } from './group-commit.js';
import { SQLITE_SCHEMA_VERSION } from './migrations.js';
import { openSqliteStore } from './open-sqlite-store.js';
import { SqliteStore } from './sqlite-store.js';

const temp = createTempDir('colloquy-disk-full-');
afterAll(() => temp.cleanup());

const opened: SqliteStore[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close().catch(() => {});
});

const WRITERS = 4;

function recordingLogger(): Logger & { lines: { level: string; msg: string; obj: unknown }[] } {
  const lines: { level: string; msg: string; obj: unknown }[] = [];
  const at =
    (level: string) =>
    (obj: unknown, msg = '') => {
      lines.push({ level, msg, obj });
    };
  const logger = {
    lines,
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: () => logger,
  };
  return logger as Logger & { lines: typeof lines };
}

/**
 * A group-commit store on a disk modelled by `PRAGMA max_page_count` (portable: no file system to
 * fill): its free space is the pages the database may still grow by, and `grow` frees space.
 */
async function openOnSmallDisk(roomPages: number, diskSpace: DiskSpaceOptions) {
  const file = temp.file('small-disk.db');
  await openSqliteStore({ file }).close();
  const db = new Database(file);
  db.pragma('temp_store = MEMORY');
  db.pragma('foreign_keys = ON');
  const pageSize = db.pragma('page_size', { simple: true }) as number;
  let maxPages = (db.pragma('page_count', { simple: true }) as number) + roomPages;
  db.pragma(`max_page_count = ${maxPages}`);
  const logger = recordingLogger();
  const store = new SqliteStore({
    db,
    file,
    readonly: false,
    synchronous: 'NORMAL',
    busyTimeoutMs: 5000,
    schemaVersion: SQLITE_SCHEMA_VERSION,
    logger,
    groupCommit: resolveGroupCommit(true)!,
    diskSpace: resolveDiskSpace({ reserveBytes: 0, checkIntervalMs: 10, ...diskSpace })!,
    freeBytes: () => (maxPages - (db.pragma('page_count', { simple: true }) as number)) * pageSize,
  });
  opened.push(store);
  await createWriterSessions(store, WRITERS);
  await store.flush();
  const grow = (pages: number) => {
    maxPages += pages;
    db.pragma(`max_page_count = ${maxPages}`);
  };
  return { store, logger, grow, pageSize };
}

/** Waits, in bounded steps, until the store takes writes again. */
async function resumed(store: SqliteStore): Promise<void> {
  for (let i = 0; i < 200 && store.diskFullSince !== undefined; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  expect(store.diskFullSince).toBeUndefined();
}

describe('the diskSpace option', () => {
  it('takes defaults, refuses bad settings, and refuses readonly and in-memory stores', async () => {
    expect(resolveDiskSpace(undefined)).toBeUndefined();
    expect(resolveDiskSpace(false)).toBeUndefined();
    expect(resolveDiskSpace(true)).toEqual({
      reserveBytes: 16 * 1024 * 1024,
      minFreeBytes: 4 * 1024 * 1024,
      checkIntervalMs: 1000,
    });
    for (const bad of [{ reserveBytes: -1 }, { minFreeBytes: 1.5 }, { checkIntervalMs: 0 }]) {
      expect(() => resolveDiskSpace(bad)).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
    }
    expect(() => openSqliteStore({ file: ':memory:', diskSpace: true })).toThrow(/in-memory/);
    const file = temp.file('readonly.db');
    await openSqliteStore({ file }).close();
    expect(() => openSqliteStore({ file, readonly: true, diskSpace: true })).toThrow(/readonly/);
  });

  it('keeps a reserve file beside the database, and none when it is 0', async () => {
    const file = temp.file('reserve.db');
    const store = openSqliteStore({ file, diskSpace: { reserveBytes: 300_000 } });
    opened.push(store);
    expect(statSync(`${file}.reserve`).size).toBe(300_000);
    expect(store.diskFullSince).toBeUndefined();
    const none = temp.file('no-reserve.db');
    opened.push(openSqliteStore({ file: none, diskSpace: { reserveBytes: 0 } }));
    expect(existsSync(`${none}.reserve`)).toBe(false);
  });
});

describe('a full disk (PRAGMA max_page_count)', () => {
  it('refuses new writes before the disk fills, keeps every acknowledged write, and resumes once there is room', async () => {
    const { store, logger, grow, pageSize } = await openOnSmallDisk(1024, { minFreeBytes: 256 * 4096 });
    const load = await writeUntilRefused(store, { writers: WRITERS, bytes: 2000, tag: 'low' });

    expect(load.acknowledged.length).toBeGreaterThan(100);
    expect(load.refusals).toHaveLength(WRITERS);
    // Refused in time: no write was rolled back, so nothing was lost, acknowledged or not.
    for (const refusal of load.refusals) expect(refusal).toMatchObject({ details: { reason: 'disk-full' } });
    expect(load.refusals.some((e) => JSON.stringify(e).includes('lostTransactions'))).toBe(false);
    expect(store.diskFullSince).toBeTypeOf('number');
    // Reads work while writes are refused.
    await expectAcknowledgedKept(store, WRITERS, load.acknowledged);
    expect(logger.lines.filter((l) => l.level === 'error')).toHaveLength(1);

    // Still full: the store keeps refusing, and logs nothing more.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(
      isDiskFull(await store.appendMessages('agent:main:load-0', [say('refused')]).catch((e) => e)),
    ).toBe(true);

    grow(Math.ceil((3 * 256 * 4096) / pageSize));
    await resumed(store);
    await store.appendMessages('agent:main:load-0', [say('after')]);
    await store.flush();
    expect((await store.readTail('agent:main:load-0', 1))[0]?.content).toBe('after');
    expect(logger.lines.filter((l) => l.level === 'error')).toHaveLength(1);
    expect(logger.lines.filter((l) => l.msg.startsWith('disk space is back'))).toHaveLength(1);
  });

  it('loses only unacknowledged writes when the disk fills in a batch, and resumes once there is room', async () => {
    // No margin: SQLite itself meets the full disk, and rolls back the whole batch it was writing.
    const { store, grow } = await openOnSmallDisk(256, { minFreeBytes: 0 });
    const load = await writeUntilRefused(store, { writers: WRITERS, bytes: 2000, tag: 'sudden' });
    expect(load.acknowledged.length).toBeGreaterThan(10);
    expect(load.refusals[0]).toMatchObject({ details: { sqliteCode: 'SQLITE_FULL', reason: 'disk-full' } });
    await expectAcknowledgedKept(store, WRITERS, load.acknowledged);

    // Room for a small write, not for the big one after it in the same batch: SQLite undoes both.
    grow(8);
    await resumed(store);
    await store.appendMessages('agent:main:load-0', [say('small, in the batch')]);
    const big = await store
      .putSession({ ...makeSessionRecord('agent:main:big'), label: 'y'.repeat(200_000) })
      .catch((e) => e);
    expect(big).toMatchObject({ details: { reason: 'disk-full' } });
    const flushed = await store.flush().catch((e) => e);
    expect(flushed).toMatchObject({
      code: 'STORE_ERROR',
      details: { reason: 'disk-full', lostTransactions: 1 },
    });
    expect(String((flushed as Error).message)).toContain('takes them again by itself');
    // Every flush while writes are refused still reports the undone batch.
    expect(await store.flush().catch((e) => e)).toBe(flushed);
    expect(store.diskFullSince).toBeTypeOf('number');
    await expectAcknowledgedKept(store, WRITERS, load.acknowledged);
    expect((await store.readTail('agent:main:load-0', 1))[0]?.content).not.toBe('small, in the batch');

    grow(1024);
    await resumed(store);
    await expect(store.flush()).resolves.toBeUndefined();
    const after = await writeUntilRefused(store, { writers: WRITERS, bytes: 2000, tag: 'after' });
    expect(after.acknowledged.length).toBeGreaterThan(100);
    await expectAcknowledgedKept(store, WRITERS, [...load.acknowledged, ...after.acknowledged]);
  });
});

const say = (text: string) => ({ role: 'user' as const, content: text, timestamp: 1 });
