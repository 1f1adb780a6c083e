import { describe, expect, it } from 'vitest';
import { databaseOutage, describeOutage } from './database-outage.js';

describe('database outage', () => {
  it('is reported only once the database was unreachable for the set time', () => {
    expect(databaseOutage(undefined, 30_000, 100_000)).toBeUndefined();
    expect(databaseOutage(80_000, 30_000, 100_000)).toBeUndefined();
    expect(databaseOutage(70_000, 30_000, 100_000)).toEqual({ state: 'unreachable', since: 70_000 });
  });

  it('says how long and since when', () => {
    expect(
      describeOutage({ state: 'unreachable', since: Date.UTC(2026, 0, 1) }, Date.UTC(2026, 0, 1, 0, 0, 45)),
    ).toBe(
      'the database has been unreachable for 45 s (since 2026-01-01T00:00:00.000Z); turns wait and resume once it is back.',
    );
  });
});
