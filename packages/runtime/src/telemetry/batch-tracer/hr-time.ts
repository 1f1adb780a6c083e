import type { HrTime, TimeInput } from '@opentelemetry/api';

const NANOS_PER_MILLI = 1e6;
const NANOS_PER_SECOND = 1e9;

/** The epoch milliseconds of `performance.now()`'s zero, read once (the getter is not free). */
const TIME_ORIGIN = performance.timeOrigin;

/**
 * Milliseconds of `performance.now()` as OpenTelemetry's `[seconds, nanoseconds]` since the epoch: the
 * process's monotonic clock from its time origin, so the durations of one process's spans never run
 * backwards.
 *
 * @param now - a `performance.now()` reading
 * @returns the time
 */
export function monotonicHrTime(now: number): HrTime {
  return millisToHrTime(TIME_ORIGIN + now);
}

/**
 * A span's start or end time as given to the API: an `HrTime`, a `Date`, epoch milliseconds, or
 * milliseconds of `performance.now()` (a number below the process's time origin).
 *
 * @param time - the time given
 * @returns the time as `HrTime`
 */
export function toHrTime(time: TimeInput): HrTime {
  if (Array.isArray(time)) return [time[0], time[1]];
  if (time instanceof Date) return millisToHrTime(time.getTime());
  return millisToHrTime(time < TIME_ORIGIN ? TIME_ORIGIN + time : time);
}

/**
 * The time from `start` to `end`, never negative.
 *
 * @param start - the start
 * @param end - the end
 * @returns the duration as `HrTime`
 */
export function hrDuration(start: HrTime, end: HrTime): HrTime {
  let seconds = end[0] - start[0];
  let nanos = end[1] - start[1];
  if (nanos < 0) {
    seconds -= 1;
    nanos += NANOS_PER_SECOND;
  }
  return seconds < 0 ? [0, 0] : [seconds, nanos];
}

/** Epoch milliseconds as `[seconds, nanoseconds]`, the nanoseconds within [0, 1e9) whatever the rounding. */
function millisToHrTime(millis: number): HrTime {
  let seconds = Math.floor(millis / 1000);
  let nanos = Math.round((millis - seconds * 1000) * NANOS_PER_MILLI);
  if (nanos < 0) {
    seconds -= 1;
    nanos += NANOS_PER_SECOND;
  } else if (nanos >= NANOS_PER_SECOND) {
    seconds += 1;
    nanos -= NANOS_PER_SECOND;
  }
  return [seconds, nanos];
}
