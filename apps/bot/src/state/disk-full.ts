import type { Store } from '@colloquy/core/store';
import type { SqliteStore } from '@colloquy/store-sqlite';

/** What `run.json` and the health endpoint say about a disk too full for the database to take writes. */
export interface DiskFull {
  /** Always `full`: a disk with room is not reported. */
  state: 'full';
  /** Epoch ms since when the store refuses writes. */
  since: number;
}

/**
 * Reports the store's disk when it is full: an SQLite store opened with `diskSpace` then refuses new
 * writes until space is freed. Other stores never report one.
 *
 * @param store - the bot's store
 * @returns the full disk to report, or undefined
 */
export function diskFullOf(store: Store): DiskFull | undefined {
  const since = (store as Partial<Pick<SqliteStore, 'diskFullSince'>>).diskFullSince;
  return since === undefined ? undefined : { state: 'full', since };
}

/**
 * The sentence `colloquy status` and `/healthz` show for a full disk.
 *
 * @param disk - the full disk
 * @param now - epoch ms
 * @returns one sentence
 */
export function describeDiskFull(disk: DiskFull, now: number): string {
  const seconds = Math.round((now - disk.since) / 1000);
  return (
    `the disk holding the database has been full for ${seconds} s (since ${new Date(disk.since).toISOString()}): ` +
    'new messages are refused until space is freed on it, then the bot resumes by itself.'
  );
}
