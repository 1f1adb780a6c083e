import type { Clock } from './runtime-options.js';

/** How much slower than real time a steady clock runs while it is ahead of the wall clock. */
const CATCH_UP_RATE = 0.99;

/** Where a {@link createSteadyClock} reads the time. Tests pass their own. */
export interface TimeSources {
  /** Wall-clock epoch milliseconds (default `Date.now`). */
  wall(): number;
  /** A monotonic reading in milliseconds that never jumps (default `performance.now`). */
  monotonic(): number;
}

const systemTime: TimeSources = {
  wall: () => Date.now(),
  monotonic: () => performance.now(),
};

/**
 * The runtime's default clock: wall-clock epoch milliseconds that never run backward.
 *
 * A forward jump of the wall clock is followed at once: timestamps are wall-clock time, and a clock
 * that was set forward was usually behind. A backward jump is not: the clock keeps counting real
 * time from where it was, at 99% speed while it is ahead of the wall clock, so it meets the wall
 * clock again (an hour's jump is absorbed in about 100 hours) without ever repeating a moment.
 * Stored deadlines, retry times and orderings made before the jump keep their meaning; nothing
 * waits an extra hour because the wall clock went back.
 *
 * Durations inside one process (timeouts, rate limits, waits) use a monotonic clock directly
 * (`performance.now()`), not this one.
 *
 * @param sources - the wall and monotonic time to read (default the system's)
 * @returns the clock
 */
export function createSteadyClock(sources: TimeSources = systemTime): Clock {
  let last = sources.wall();
  let lastMonotonic = sources.monotonic();
  return {
    now() {
      const wall = sources.wall();
      const monotonic = sources.monotonic();
      const elapsed = Math.max(0, monotonic - lastMonotonic);
      // Ahead of the wall clock (it was set back): count slower, but never fall behind it.
      last = last + elapsed > wall ? Math.max(wall, last + elapsed * CATCH_UP_RATE) : wall;
      lastMonotonic = monotonic;
      return Math.floor(last);
    },
  };
}
