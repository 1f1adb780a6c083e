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

/** Where `file`'s write-ahead log stands, from its wal-index. */
export interface WalIndexFrames {
  /** The last valid frame of the log (`mxFrame`): 0 right after the log started over. */
  logFrames: number;
  /** Frames already copied into the database file (`nBackfill`). */
  copiedFrames: number;
}

/**
 * Reads the frame counts of `file`'s write-ahead log from the wal-index without taking any lock, or
 * `undefined` when it cannot tell (no `-shm`, not initialised). A racing writer can make the answer
 * stale.
 */
export function readWalIndex(file: string): WalIndexFrames | undefined {
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
  const logFrames = little ? buffer.readUInt32LE(MX_FRAME) : buffer.readUInt32BE(MX_FRAME);
  const copiedFrames = little ? buffer.readUInt32LE(N_BACKFILL) : buffer.readUInt32BE(N_BACKFILL);
  return { logFrames, copiedFrames };
}

/**
 * How many frames of `file`'s write-ahead log wait to be copied into the database file (see
 * {@link readWalIndex}), or `undefined` when it cannot tell. A stale answer is never harmful: it
 * only decides whether a checkpoint is worth trying.
 */
export function pendingWalFrames(file: string): number | undefined {
  const index = readWalIndex(file);
  if (index === undefined || index.logFrames < index.copiedFrames) return undefined;
  return index.logFrames - index.copiedFrames;
}
