import * as nodeFs from 'node:fs/promises';
import { dirname } from 'node:path';

/** An open file, as far as atomic writes need one (a subset of `fs.promises.FileHandle`). */
export interface FileHandleLike {
  /** Writes the whole file. */
  writeFile(data: string): Promise<void>;
  /** Flushes the file to disk (fsync). */
  sync(): Promise<void>;
  /** Closes the handle. */
  close(): Promise<void>;
}

/**
 * The file-system calls the plugin's state files use: a subset of `node:fs/promises`.
 * Tests inject one that fails mid-write to prove that a crash never corrupts credentials.
 */
export interface StateFs {
  /** Reads a whole file as UTF-8. */
  readFile(path: string, encoding: 'utf8'): Promise<string>;
  /** Opens a file for writing (`w`), or a folder for reading (`r`) so it can be fsynced. */
  open(path: string, flags: 'w' | 'r'): Promise<FileHandleLike>;
  /** Renames a file, replacing `to`. */
  rename(from: string, to: string): Promise<void>;
  /** Deletes a file. */
  unlink(path: string): Promise<void>;
  /** Creates a folder and its parents. */
  mkdir(path: string, options: { recursive: true }): Promise<unknown>;
  /** The names of a folder's entries. */
  readdir(path: string): Promise<string[]>;
}

/** The real file system. */
export const nodeStateFs: StateFs = nodeFs;

let counter = 0;

/**
 * Writes `data` to `path` so that a reader sees either the old content or the new one, never a
 * mix: write a temp file beside it, fsync it, rename it over `path`, then fsync the folder.
 * A failure before the rename leaves `path` untouched and removes the temp file.
 */
export async function writeFileAtomic(path: string, data: string, fs: StateFs = nodeStateFs): Promise<void> {
  counter = (counter + 1) % 1_000_000;
  const temp = `${path}.${process.pid}.${counter}.tmp`;
  try {
    const handle = await fs.open(temp, 'w');
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.rename(temp, path);
  } catch (error) {
    await fs.unlink(temp).catch(() => {});
    throw error;
  }
  await syncDir(dirname(path), fs);
}

/** Flushes a folder's entries (the rename) to disk; some platforms cannot, which is fine. */
async function syncDir(dir: string, fs: StateFs): Promise<void> {
  let handle: FileHandleLike | undefined;
  try {
    handle = await fs.open(dir, 'r');
    await handle.sync();
  } catch {
    // Best effort: Windows and some file systems refuse to fsync a directory.
  } finally {
    await handle?.close().catch(() => {});
  }
}

/** True when `name` is a temp file left by an interrupted {@link writeFileAtomic}. */
export const isAtomicTempFile = (name: string): boolean => /\.\d+\.\d+\.tmp$/.test(name);

/** Reads a UTF-8 file, or `undefined` when it does not exist. Other errors are thrown. */
export async function readFileIfExists(path: string, fs: StateFs = nodeStateFs): Promise<string | undefined> {
  try {
    return await fs.readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Serialises async jobs per key, so two writes of one file never interleave. */
export function createKeyedQueue(): <T>(key: string, job: () => Promise<T>) => Promise<T> {
  const tails = new Map<string, Promise<unknown>>();
  return <T>(key: string, job: () => Promise<T>): Promise<T> => {
    const previous = tails.get(key) ?? Promise.resolve();
    const run = previous.then(job, job);
    const tail = run.catch(() => {});
    tails.set(key, tail);
    void tail.then(() => {
      if (tails.get(key) === tail) tails.delete(key);
    });
    return run;
  };
}
