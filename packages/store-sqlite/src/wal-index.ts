import { closeSync, openSync, readSync } from 'node:fs';
import { endianness } from 'node:os';

// The wal-index (the `-shm` file) starts with two copies of a 48-byte header, whose `mxFrame` (the
// last valid frame of the log) is at byte 16, then the checkpoint info, whose `nBackfill` (frames
// already copied into the database) is at byte 96; both are 32-bit integers in the machine's byte
// order (https://www.sqlite.org/walformat.html).
const IS_INIT = 12;
const MX_FRAME = 16;
const N_BACKFILL = 96;
const HEADER_BYTES = 100;

/**
 * How many frames of `file`'s write-ahead log wait to be copied into the database file, read
 * from the wal-index without taking any lock, or `undefined` when it cannot tell (no `-shm`,
 * not initialised). A racing writer can make the answer stale, never harmful: it only decides
 * whether a checkpoint is worth trying.
 */
export function pendingWalFrames(file: string): number | undefined {
  const buffer = Buffer.alloc(HEADER_BYTES);
  let fd: number | undefined;
  try {
    fd = openSync(`${file}-shm`, 'r');
    if (readSync(fd, buffer, 0, HEADER_BYTES, 0) < HEADER_BYTES || buffer[IS_INIT] !== 1) return undefined;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  const little = endianness() === 'LE';
  const mxFrame = little ? buffer.readUInt32LE(MX_FRAME) : buffer.readUInt32BE(MX_FRAME);
  const nBackfill = little ? buffer.readUInt32LE(N_BACKFILL) : buffer.readUInt32BE(N_BACKFILL);
  return mxFrame >= nBackfill ? mxFrame - nBackfill : undefined;
}
