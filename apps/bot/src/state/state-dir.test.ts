import {
  chmodSync,
  chownSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ensureStateDir,
  readOrCreateSecret,
  readRunInfo,
  removeRunInfo,
  tightenFiles,
  writeRunInfo,
} from './state-dir.js';

let dir: string;
beforeEach(() => {
  dir = join(mkdtempSync(join(tmpdir(), 'colloquy-state-')), 'state');
});
afterEach(() => rmSync(join(dir, '..'), { recursive: true, force: true }));

describe('state directory', () => {
  it('tightens a directory and database files that other users could read, and says so', async () => {
    mkdirSync(dir, { mode: 0o755 });
    chmodSync(dir, 0o755);
    const db = join(dir, 'colloquy.db');
    writeFileSync(db, '', { mode: 0o644 });
    chmodSync(db, 0o644);
    const told: string[] = [];
    await ensureStateDir(dir, (what) => told.push(what));
    await tightenFiles([db, `${db}-wal`], (what) => told.push(what));
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(db).mode & 0o777).toBe(0o600);
    expect(told).toEqual([`${dir} (was 755, now 700)`, `${db} (was 644, now 600)`]);
    told.length = 0;
    await ensureStateDir(dir, (what) => told.push(what));
    expect(told).toEqual([]);
  });

  it.skipIf(process.getuid?.() !== 0)(
    'refuses a directory that belongs to another user (run as root)',
    async () => {
      mkdirSync(dir, { mode: 0o700 });
      chownSync(dir, 65534, 65534);
      await expect(ensureStateDir(dir)).rejects.toMatchObject({
        code: 'CONFIG_INVALID',
        message: expect.stringContaining('belongs to another user'),
      });
    },
  );

  it('creates the directory 0700 and a secret 0600 once, then reads the same secret', async () => {
    await ensureStateDir(dir);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    const first = await readOrCreateSecret(dir, 'admin-token');
    expect(first.created).toBe(true);
    expect(first.value).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(statSync(first.file).mode & 0o777).toBe(0o600);
    const second = await readOrCreateSecret(dir, 'admin-token');
    expect(second).toEqual({ ...first, created: false });
  });

  it('tightens a secret file that others can read', async () => {
    await ensureStateDir(dir);
    writeFileSync(join(dir, 'admin-token'), 'handmade-token\n', { mode: 0o644 });
    const secret = await readOrCreateSecret(dir, 'admin-token');
    expect(secret).toMatchObject({ value: 'handmade-token', created: false });
    expect(statSync(join(dir, 'admin-token')).mode & 0o777).toBe(0o600);
  });

  it('gives two concurrent first starts the same secret', async () => {
    await ensureStateDir(dir);
    const [a, b] = await Promise.all([readOrCreateSecret(dir, 's'), readOrCreateSecret(dir, 's')]);
    expect(a.value).toBe(b.value);
    expect(readFileSync(join(dir, 's'), 'utf8').trim()).toBe(a.value);
  });

  it('reads run.json only while its process lives, and removes only its own', async () => {
    await ensureStateDir(dir);
    const info = {
      pid: process.pid,
      startedAt: 1,
      gatewayUrl: 'ws://127.0.0.1:1',
      channels: {},
      updatedAt: 2,
    };
    await writeRunInfo(dir, info);
    expect(await readRunInfo(dir)).toEqual(info);
    await removeRunInfo(dir, process.pid + 1);
    expect(await readRunInfo(dir)).toEqual(info);
    await writeRunInfo(dir, { ...info, pid: 2 ** 22 + 12345 });
    expect(await readRunInfo(dir)).toBeUndefined();
    await writeRunInfo(dir, info);
    await removeRunInfo(dir, process.pid);
    expect(await readRunInfo(dir)).toBeUndefined();
  });
});
