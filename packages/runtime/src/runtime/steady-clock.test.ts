import { describe, expect, it } from 'vitest';
import { createSteadyClock } from './steady-clock.js';

const HOUR = 3_600_000;

function fakeTime(start = 1_750_000_000_000) {
  const time = { wall: start, monotonic: 5_000 };
  return {
    sources: { wall: () => time.wall, monotonic: () => time.monotonic },
    /** Real time passes: both clocks move. */
    pass(ms: number) {
      time.wall += ms;
      time.monotonic += ms;
    },
    /** Someone sets the wall clock: only it moves. */
    setWall(by: number) {
      time.wall += by;
    },
    get wall() {
      return time.wall;
    },
  };
}

describe('createSteadyClock', () => {
  it('reads the wall clock while the wall clock behaves', () => {
    const time = fakeTime();
    const clock = createSteadyClock(time.sources);
    expect(clock.now()).toBe(time.wall);
    time.pass(1_234);
    expect(clock.now()).toBe(time.wall);
  });

  it('follows a forward jump at once', () => {
    const time = fakeTime();
    const clock = createSteadyClock(time.sources);
    clock.now();
    time.setWall(HOUR);
    expect(clock.now()).toBe(time.wall);
  });

  it('never runs backward when the wall clock is set an hour back, and keeps counting real time', () => {
    const time = fakeTime();
    const clock = createSteadyClock(time.sources);
    const before = clock.now();
    time.setWall(-HOUR);
    expect(clock.now()).toBe(before);
    time.pass(10_000);
    const later = clock.now();
    // Ahead of the wall clock it runs at 99% speed: 9.9 s of the 10 s that passed.
    expect(later - before).toBe(9_900);
    expect(later).toBeGreaterThan(time.wall);
  });

  it('meets the wall clock again after a backward jump and then reads it', () => {
    const time = fakeTime();
    const clock = createSteadyClock(time.sources);
    clock.now();
    time.setWall(-60_000);
    let previous = clock.now();
    // A minute ahead closes at 1% of real time: 100 minutes, read every minute.
    for (let minute = 0; minute < 101; minute++) {
      time.pass(60_000);
      const now = clock.now();
      expect(now).toBeGreaterThanOrEqual(previous);
      previous = now;
    }
    expect(clock.now()).toBe(time.wall);
  });

  it('reads the system time by default', () => {
    const clock = createSteadyClock();
    const now = clock.now();
    expect(Math.abs(now - Date.now())).toBeLessThan(1_000);
  });
});
