import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { corruptStoreError } from './sqlite-errors.js';

/** Every SQLite 3 database file starts with these 16 bytes. */
const SQLITE_MAGIC = Buffer.from('SQLite format 3\u0000', 'latin1');
/** The database header is the first 100 bytes of page 1. */
const HEADER_SIZE = 100;

/** What the 100-byte SQLite header of a file says, read without opening it as a database. */
export interface StoreFileHeader {
  /** `PRAGMA user_version` (offset 60): our schema version. */
  userVersion: number;
  /** `PRAGMA application_id` (offset 68). */
  applicationId: number;
  /** The schema cookie (offset 40): 0 when no table was ever created. */
  schemaCookie: number;
  /** True when the file is in WAL mode (read/write versions 2 at offsets 18-19). */
  walMode: boolean;
}

/** What is at a store path before we open it. */
export type StoreFileState =
  | { kind: 'missing' }
  | { kind: 'empty' }
  | { kind: 'sqlite'; header: StoreFileHeader };

/**
 * Looks at `file` without opening it as a database: missing, empty (SQLite treats both as a new
 * database), or an SQLite file and what its header says. Anything else is refused, so a wrong path
 * is never written to. In WAL mode the header can lag behind the `-wal` file: callers that see a
 * non-empty log ask SQLite instead.
 *
 * @throws `STORE_CORRUPT` when the file exists but does not start with a complete SQLite header
 */
export function inspectStoreFile(file: string): StoreFileState {
  let size: number;
  try {
    const stat = statSync(file);
    if (!stat.isFile()) throw corruptStoreError(file, 'the path is not a regular file');
    size = stat.size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'missing' };
    throw error;
  }
  if (size === 0) return { kind: 'empty' };
  const bytes = Buffer.alloc(HEADER_SIZE);
  const fd = openSync(file, 'r');
  let read: number;
  try {
    read = readSync(fd, bytes, 0, HEADER_SIZE, 0);
  } finally {
    closeSync(fd);
  }
  if (read < SQLITE_MAGIC.length || !bytes.subarray(0, SQLITE_MAGIC.length).equals(SQLITE_MAGIC)) {
    throw corruptStoreError(file, 'the file does not start with the SQLite header "SQLite format 3"');
  }
  if (read < HEADER_SIZE) throw corruptStoreError(file, 'the SQLite header is truncated');
  if (!isPlausibleHeader(bytes)) throw corruptStoreError(file, 'the SQLite header is damaged');
  return {
    kind: 'sqlite',
    header: {
      userVersion: bytes.readInt32BE(60),
      applicationId: bytes.readInt32BE(68),
      schemaCookie: bytes.readUInt32BE(40),
      walMode: bytes[18] === 2 && bytes[19] === 2,
    },
  };
}

/** Size of the `-wal` file beside `file` (0 when there is none). */
export function walSize(file: string): number {
  try {
    return statSync(`${file}-wal`).size;
  } catch {
    return 0;
  }
}

/** The fixed fields of a valid header: a power-of-two page size and the constant payload fractions. */
function isPlausibleHeader(bytes: Buffer): boolean {
  const raw = bytes.readUInt16BE(16);
  const pageSize = raw === 1 ? 65536 : raw;
  const powerOfTwo = pageSize >= 512 && pageSize <= 65536 && (pageSize & (pageSize - 1)) === 0;
  return powerOfTwo && bytes[21] === 64 && bytes[22] === 32 && bytes[23] === 32;
}
