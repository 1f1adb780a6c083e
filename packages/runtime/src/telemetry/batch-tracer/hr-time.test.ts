import { describe, expect, it } from 'vitest';
import { hrDuration, monotonicHrTime, toHrTime } from './hr-time.js';

/** A whole second some time after this process started, in epoch milliseconds. */
const LATER = Math.ceil(performance.timeOrigin / 1000) * 1000 + 60_000;

describe('span times', () => {
  it('reads an HrTime, a Date, epoch milliseconds and performance.now() milliseconds', () => {
    expect(toHrTime([12, 345])).toEqual([12, 345]);
    expect(toHrTime(new Date(LATER + 123))).toEqual([LATER / 1000, 123_000_000]);
    expect(toHrTime(LATER + 123.5)).toEqual([LATER / 1000, 123_500_000]);
    const now = performance.now();
    expect(toHrTime(now)).toEqual(monotonicHrTime(now));
    const [seconds] = monotonicHrTime(now);
    expect(Math.abs(seconds - Date.now() / 1000)).toBeLessThan(5);
  });

  it('keeps nanoseconds within a second around every rounding at a second boundary', () => {
    // Doubles near today's epoch milliseconds are 2^-12 ms apart: step through a boundary by them.
    for (let step = -64; step <= 64; step++) {
      const [seconds, nanos] = toHrTime(LATER + step * 2 ** -12);
      expect(nanos).toBeGreaterThanOrEqual(0);
      expect(nanos).toBeLessThan(1e9);
      expect(Math.abs(seconds * 1000 + nanos / 1e6 - (LATER + step * 2 ** -12))).toBeLessThan(0.001);
    }
  });

  it('measures a duration across a second boundary, and never a negative one', () => {
    expect(hrDuration([10, 900_000_000], [11, 100_000_000])).toEqual([0, 200_000_000]);
    expect(hrDuration([11, 0], [10, 0])).toEqual([0, 0]);
  });
});
