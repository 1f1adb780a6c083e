import { closeSync, openSync, rmSync, statfsSync, statSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { ColloquyError, type Logger } from '@colloquy/core';

/**
 * Settings of `SqliteStoreOptions.diskSpace`: how the store keeps a full disk from losing writes,
 * and how it resumes. Every field is optional.
 */
export interface DiskSpaceOptions {
  /**
   * The size of the reserve file `<file>.reserve` kept beside the database, in bytes (default
   * 16 MiB; 0 keeps none). It is deleted the moment the disk runs low, so the writes under way can
   * still commit (and the process can still write its logs) however the disk was filled, and it is
   * written again before writes resume.
   */
  reserveBytes?: number;
  /**
   * New writes are refused once the disk holds less than this many free bytes (default 4 MiB). The
   * writes under way then commit into what is left, plus the reserve.
   */
  minFreeBytes?: number;
  /**
   * How often free space is checked while writes are refused, in milliseconds (default 1000).
   * Writes resume once the disk has room for the reserve plus twice `minFreeBytes`.
   */
  checkIntervalMs?: number;
}

/** {@link DiskSpaceOptions} with the defaults applied. */
export interface DiskSpaceSettings {
  readonly reserveBytes: number;
  readonly minFreeBytes: number;
  readonly checkIntervalMs: number;
}

const MIB = 1024 * 1024;
const DEFAULTS: DiskSpaceSettings = { reserveBytes: 16 * MIB, minFreeBytes: 4 * MIB, checkIntervalMs: 1000 };
/**
 * While writes are taken, a write samples free space when the last sample is this old: a `statfs` costs
 * about 7 µs, so at most 0.07% of a core, and a disk filling at 100 MB/s moves 1 MB between two samples.
 */
const SAMPLE_EVERY_MS = 10;
/** The reserve file is written in pieces of this size. */
const CHUNK = Buffer.alloc(MIB);

/**
 * Applies the defaults to `SqliteStoreOptions.diskSpace`; `undefined` when it is off.
 *
 * @throws `INVALID_ARGUMENT` when a setting is not a whole number in range
 */
export function resolveDiskSpace(
  option: boolean | DiskSpaceOptions | undefined,
): DiskSpaceSettings | undefined {
  if (option === undefined || option === false) return undefined;
  const settings = { ...DEFAULTS, ...(option === true ? {} : option) };
  for (const [name, min] of [
    ['reserveBytes', 0],
    ['minFreeBytes', 0],
    ['checkIntervalMs', 1],
  ] as const) {
    const value: unknown = settings[name];
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
      throw new ColloquyError(
        'INVALID_ARGUMENT',
        `\`diskSpace.${name}\` must be a whole number >= ${min}, got ${String(value)}.`,
        { [name]: value },
      );
    }
  }
  return settings;
}

/** Free bytes on the file system holding `dir`, as an unprivileged process may use them. */
export function freeBytesOf(dir: string): number {
  const stats = statfsSync(dir);
  return stats.bavail * stats.bsize;
}

/** What {@link DiskSpaceGuard} needs. */
export interface DiskSpaceGuardInit {
  /** The absolute path of the database file. */
  file: string;
  settings: DiskSpaceSettings;
  logger: Logger;
  /** Free bytes on the disk holding a directory. Default {@link freeBytesOf}; tests give their own. */
  freeBytes?: (dir: string) => number;
  /** Called when writes resume, after the reserve is back. */
  onResume: () => void;
}

/**
 * Watches the free space of the disk under one store: refuses new writes while it is low (after
 * deleting the reserve file, so the writes under way still fit), and takes them again by itself once
 * space returns. SQLite rolls the whole transaction back when the disk fills in the middle of one, so
 * refusing in time is what keeps a full disk from undoing writes.
 */
export class DiskSpaceGuard {
  private readonly file: string;
  private readonly reserveFile: string;
  private readonly dir: string;
  private readonly settings: DiskSpaceSettings;
  private readonly logger: Logger;
  private readonly freeBytes: (dir: string) => number;
  private readonly onResume: () => void;
  /** When writes were first refused (epoch ms), while they are. */
  private fullSince: number | undefined;
  private lastSampleAt = Number.NEGATIVE_INFINITY;
  private timer: NodeJS.Timeout | undefined;

  constructor(init: DiskSpaceGuardInit) {
    this.file = init.file;
    this.reserveFile = `${init.file}.reserve`;
    this.dir = dirname(init.file);
    this.settings = init.settings;
    this.logger = init.logger;
    this.freeBytes = init.freeBytes ?? freeBytesOf;
    this.onResume = init.onResume;
    if (!this.fillReserve()) {
      this.logger.warn(
        { file: this.reserveFile, reserveBytes: this.settings.reserveBytes },
        'no room for the disk reserve file; it is written once the disk has room',
      );
    }
  }

  /** Since when writes are refused for lack of disk space (epoch ms), or undefined while they are taken. */
  get since(): number | undefined {
    return this.fullSince;
  }

  /**
   * Checks a new write may start: refuses while the disk is full, and samples free space (at most every
   * 10 ms), refusing from the write that finds it below `minFreeBytes`.
   *
   * @throws `STORE_ERROR` with `details.reason` `'disk-full'` when writes are refused
   */
  assertWritable(): void {
    if (this.fullSince === undefined) {
      const now = performance.now();
      if (now - this.lastSampleAt < SAMPLE_EVERY_MS) return;
      this.lastSampleAt = now;
      const free = this.sampleFreeBytes();
      if (free === undefined || free >= this.settings.minFreeBytes) return;
      this.enterFull(`${free} bytes free, below diskSpace.minFreeBytes`);
    }
    throw this.refusal();
  }

  /**
   * Starts refusing writes (SQLite reported the disk full, or free space ran low): deletes the reserve,
   * logs once, and checks free space every `checkIntervalMs` until writes can resume.
   *
   * @param reason - what found the disk full, for the log
   */
  enterFull(reason: string): void {
    if (this.fullSince !== undefined) return;
    this.fullSince = Date.now();
    rmSync(this.reserveFile, { force: true });
    this.logger.error(
      { file: this.file, reason, resumeAtFreeBytes: this.resumeAt() },
      'the disk holding the store is full: new writes are refused until space is freed, then resume by themselves',
    );
    this.timer = setInterval(() => this.tryResume(), this.settings.checkIntervalMs);
    this.timer.unref();
  }

  /** The error a refused write gets. */
  refusal(): ColloquyError {
    return new ColloquyError(
      'STORE_ERROR',
      `The disk holding the Colloquy store ${this.file} is full, so the store takes no writes for now ` +
        `(reads work). Free space on that disk: writes resume by themselves once ${this.resumeAt()} bytes are free.`,
      { file: this.file, reason: 'disk-full', since: this.fullSince },
    );
  }

  /** Stops the free-space checks (the store is closing). */
  close(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Room for the reserve, and twice the margin so that one write does not refuse the next at once. */
  private resumeAt(): number {
    return this.settings.reserveBytes + 2 * this.settings.minFreeBytes;
  }

  private tryResume(): void {
    const free = this.sampleFreeBytes();
    if (free === undefined || free < this.resumeAt() || !this.fillReserve()) return;
    const since = this.fullSince;
    this.close();
    this.fullSince = undefined;
    this.lastSampleAt = performance.now();
    this.logger.info(
      { file: this.file, freeBytes: free, since },
      'disk space is back: the store takes writes again',
    );
    this.onResume();
  }

  /**
   * Writes the reserve file to its full size unless it is there already.
   *
   * @returns false when the disk has no room for it (nothing is left behind then)
   */
  private fillReserve(): boolean {
    const size = this.settings.reserveBytes;
    const present = sizeOf(this.reserveFile);
    if (size === 0 || present >= size) return true;
    const free = this.sampleFreeBytes();
    if (free === undefined || free < size - present + this.settings.minFreeBytes) return false;
    try {
      const fd = openSync(this.reserveFile, 'w', 0o600);
      try {
        // Real blocks, not a sparse file: zeros written are allocated.
        for (let written = 0; written < size; ) {
          written += writeSync(fd, CHUNK, 0, Math.min(CHUNK.length, size - written));
        }
      } finally {
        closeSync(fd);
      }
      return true;
    } catch (error) {
      rmSync(this.reserveFile, { force: true });
      this.logger.warn({ err: error, file: this.reserveFile }, 'could not write the disk reserve file');
      return false;
    }
  }

  /** Free bytes on the disk, or undefined (logged) when the file system does not say: writes go on then. */
  private sampleFreeBytes(): number | undefined {
    try {
      return this.freeBytes(this.dir);
    } catch (error) {
      this.logger.warn({ err: error, file: this.file }, 'could not read the free space of the disk');
      return undefined;
    }
  }
}

function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}
