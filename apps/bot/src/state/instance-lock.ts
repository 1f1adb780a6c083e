import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ColloquyError } from '@colloquy/core';
import { isAlive } from './state-dir.js';

/** The lock file a bot on SQLite holds in its state directory while it runs. */
export const INSTANCE_LOCK_FILE = 'colloquy.lock';

/**
 * Claims the state directory for this process: SQLite serves one bot at a time (several on one
 * file would each run their own queue and answer every message twice). A lock left by a process
 * that is gone (killed) is taken over. CLI commands (`sessions`, `pairing`) do not take it.
 *
 * @param stateDir - the state directory
 * @returns releases the lock (only if this process still holds it)
 * @throws ColloquyError `STORE_LOCKED` when a live process holds it; the message names its pid and
 *   the ways out
 */
export async function lockStateDir(stateDir: string): Promise<() => Promise<void>> {
  const file = join(stateDir, INSTANCE_LOCK_FILE);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await writeFile(file, `${process.pid}\n`, { flag: 'wx', mode: 0o600 });
      return () => releaseLock(file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = await lockHolder(file);
    if (holder !== undefined && holder !== process.pid && isAlive(holder)) {
      throw new ColloquyError(
        'STORE_LOCKED',
        `Colloquy is already running on the state directory ${stateDir} (pid ${holder}). SQLite serves one instance: stop that one first, start this one with another state directory (COLLOQUY_STATE_DIR), or keep sessions in PostgreSQL (COLLOQUY_DATABASE_URL) to run several instances.`,
        { pid: holder, stateDir },
      );
    }
    await rm(file, { force: true });
  }
  throw new ColloquyError('STORE_LOCKED', `Could not claim ${file}; another Colloquy is starting there.`, {
    stateDir,
  });
}

async function releaseLock(file: string): Promise<void> {
  if ((await lockHolder(file)) === process.pid) await rm(file, { force: true });
}

async function lockHolder(file: string): Promise<number | undefined> {
  try {
    const pid = Number.parseInt(await readFile(file, 'utf8'), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}
