import { MemoryStore, type Store } from '@colloquy/core/store';
import { describe, expect, it } from 'vitest';
import { describeDiskFull, diskFullOf } from './disk-full.js';

describe('full disk', () => {
  it('is reported while the store refuses writes for lack of space, and never by other stores', () => {
    const sqliteLike = (since: number | undefined) => ({ diskFullSince: since }) as unknown as Store;
    expect(diskFullOf(sqliteLike(undefined))).toBeUndefined();
    expect(diskFullOf(sqliteLike(70_000))).toEqual({ state: 'full', since: 70_000 });
    expect(diskFullOf(new MemoryStore())).toBeUndefined();
  });

  it('says how long, since when, and that the bot resumes once space is freed', () => {
    expect(
      describeDiskFull({ state: 'full', since: Date.UTC(2026, 0, 1) }, Date.UTC(2026, 0, 1, 0, 0, 45)),
    ).toBe(
      'the disk holding the database has been full for 45 s (since 2026-01-01T00:00:00.000Z): new messages are ' +
        'refused until space is freed on it, then the bot resumes by itself.',
    );
  });
});
