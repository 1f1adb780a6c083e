import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { corruptStoreError } from './sqlite-errors.js';

/** Every SQLite 3 database file starts with these 16 bytes. */
const SQLITE_HEADER = Buffer.from('SQLite format 3\u0000', 'latin1');

/** What is at a store path before we open it. */
export type FileState = 'missing' | 'empty' | 'sqlite';

/**
 * Looks at `file` without opening it as a database: missing, empty (SQLite treats both as a new
 * database), or an SQLite file. Anything else is refused, so a wrong path never gets overwritten.
 *
 * @throws `STORE_CORRUPT` when the file exists but does not start with the SQLite header
 */
export function inspectStoreFile(file: string): FileState {
  let size: number;
  try {
    const stat = statSync(file);
    if (!stat.isFile()) throw corruptStoreError(file, 'the path is not a regular file');
    size = stat.size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    throw error;
  }
  if (size === 0) return 'empty';
  const header = Buffer.alloc(SQLITE_HEADER.length);
  const fd = openSync(file, 'r');
  let read: number;
  try {
    read = readSync(fd, header, 0, header.length, 0);
  } finally {
    closeSync(fd);
  }
  if (read < header.length || !header.equals(SQLITE_HEADER)) {
    throw corruptStoreError(file, 'the file does not start with the SQLite header "SQLite format 3"');
  }
  return 'sqlite';
}
