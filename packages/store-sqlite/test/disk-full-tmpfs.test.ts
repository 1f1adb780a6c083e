import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../src/open-sqlite-store.js';
import type { SqliteStore } from '../src/sqlite-store.js';
import { createWriterSessions, expectAcknowledgedKept, writeUntilRefused } from './helpers/write-load.js';

/**
 * The store on a real 2 MiB tmpfs, filled by its own writes and by another writer. Mounting needs
 * root (or CAP_SYS_ADMIN): elsewhere the suite is skipped, and `src/disk-full.test.ts` covers the
 * same behaviour on a disk modelled with `PRAGMA max_page_count`.
 */
const mount = mountSmallTmpfs();
afterAll(() => {
  if (mount.ok) {
    execFileSync('umount', [mount.dir]);
    rmSync(mount.dir, { recursive: true, force: true });
  }
});

const WRITERS = 4;
const RESERVE = 256 * 1024;
const MIN_FREE = 128 * 1024;

const opened: SqliteStore[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close().catch(() => {});
  if (mount.ok)
    for (const name of ['colloquy.db', 'colloquy.db-wal', 'colloquy.db-shm', 'hog'])
      rmSync(join(mount.dir, name), { force: true });
});

function mountSmallTmpfs(): { ok: true; dir: string } | { ok: false; reason: string } {
  const dir = mkdtempSync(join(tmpdir(), 'colloquy-tmpfs-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', dir], { stdio: 'pipe' });
    return { ok: true, dir };
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    const stderr = String((error as { stderr?: unknown }).stderr ?? '').trim();
    return { ok: false, reason: `cannot mount a tmpfs here (${stderr || (error as Error).message})` };
  }
}

/** Writes zeros to `file` until the disk is full (another program filling the disk). */
function fillDisk(file: string): void {
  const fd = openSync(file, 'w');
  const chunk = Buffer.alloc(4096);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(fd);
  }
}

async function openOnTmpfs(dir: string) {
  const file = join(dir, 'colloquy.db');
  const store = openSqliteStore({
    file,
    groupCommit: true,
    diskSpace: { reserveBytes: RESERVE, minFreeBytes: MIN_FREE, checkIntervalMs: 20 },
  });
  opened.push(store);
  await createWriterSessions(store, WRITERS);
  await store.flush();
  return { store, reserve: `${file}.reserve` };
}

async function resumed(store: SqliteStore): Promise<void> {
  for (let i = 0; i < 250 && store.diskFullSince !== undefined; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  expect(store.diskFullSince).toBeUndefined();
}

describe.skipIf(!mount.ok)(
  `a full disk (a 2 MiB tmpfs${mount.ok ? '' : `; skipped: ${mount.reason}`})`,
  () => {
    const dir = mount.ok ? mount.dir : '';

    it('refuses writes when its own writes fill the disk, loses nothing acknowledged, and resumes when space is freed', async () => {
      // Another file takes half the disk; deleting it is the owner freeing space.
      const hog = join(dir, 'hog');
      const fd = openSync(hog, 'w');
      writeSync(fd, Buffer.alloc(768 * 1024));
      closeSync(fd);
      const { store, reserve } = await openOnTmpfs(dir);
      expect(statSync(reserve).size).toBe(RESERVE);

      const load = await writeUntilRefused(store, { writers: WRITERS, bytes: 1000, tag: 'own' });
      expect(load.acknowledged.length).toBeGreaterThan(50);
      expect(store.diskFullSince).toBeTypeOf('number');
      expect(existsSync(reserve)).toBe(false);
      await expectAcknowledgedKept(store, WRITERS, load.acknowledged);

      rmSync(hog);
      await resumed(store);
      expect(statSync(reserve).size).toBe(RESERVE);
      const after = await writeUntilRefused(store, { writers: WRITERS, bytes: 1000, tag: 'after' });
      expect(after.acknowledged.length).toBeGreaterThan(50);
      await expectAcknowledgedKept(store, WRITERS, [...load.acknowledged, ...after.acknowledged]);
    });

    it('survives another program filling the disk to the last byte under load, and resumes when it is freed', async () => {
      const { store } = await openOnTmpfs(dir);
      const hog = join(dir, 'hog');
      let filled = false;
      // Some writes go through first; then the disk fills in one go, between two of the store's writes.
      const load = await writeUntilRefused(store, {
        writers: WRITERS,
        bytes: 1000,
        tag: 'hogged',
        onAcknowledged: (count) => {
          if (count !== 20) return;
          fillDisk(hog);
          filled = true;
        },
      });
      expect(filled).toBe(true);
      expect(load.acknowledged.length).toBeGreaterThan(10);
      expect(store.diskFullSince).toBeTypeOf('number');
      await expectAcknowledgedKept(store, WRITERS, load.acknowledged);

      rmSync(hog);
      await resumed(store);
      const after = await writeUntilRefused(store, { writers: WRITERS, bytes: 1000, tag: 'after' });
      expect(after.acknowledged.length).toBeGreaterThan(50);
      await expectAcknowledgedKept(store, WRITERS, [...load.acknowledged, ...after.acknowledged]);
      await store.close();
      // What was acknowledged is in the file, not only in this connection's view of it.
      const reopened = openSqliteStore({ file: join(dir, 'colloquy.db'), readonly: true });
      opened.push(reopened);
      await expectAcknowledgedKept(reopened, WRITERS, [...load.acknowledged, ...after.acknowledged]);
    });
  },
);
