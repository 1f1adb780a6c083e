import { describe, expect, it } from 'vitest';
import { createRateLimiter } from './token-bucket.js';

describe('rate limiter', () => {
  it('allows a burst, then refuses until tokens refill', () => {
    const limiter = createRateLimiter({ burst: 3, perSecond: 1 });
    const t0 = 1_000_000;
    expect([1, 2, 3, 4].map(() => limiter.take('v', t0))).toEqual([true, true, true, false]);
    expect(limiter.take('v', t0 + 500)).toBe(false);
    expect(limiter.take('v', t0 + 1000)).toBe(true);
    expect(limiter.take('v', t0 + 1000)).toBe(false);
  });

  it('measures refills on a monotonic clock: a wall clock set an hour forward hands out no burst', () => {
    const realDateNow = Date.now;
    try {
      const limiter = createRateLimiter({ burst: 2, perSecond: 0.01 });
      expect([1, 2, 3].map(() => limiter.take('v'))).toEqual([true, true, false]);
      Date.now = () => realDateNow() + 3_600_000;
      expect(limiter.take('v')).toBe(false);
      Date.now = () => realDateNow() - 3_600_000;
      expect(limiter.take('v')).toBe(false);
    } finally {
      Date.now = realDateNow;
    }
  });

  it('keeps keys apart', () => {
    const limiter = createRateLimiter({ burst: 1, perSecond: 1 });
    expect(limiter.take('a', 0)).toBe(true);
    expect(limiter.take('a', 0)).toBe(false);
    expect(limiter.take('b', 0)).toBe(true);
  });

  it('never refills above the burst size', () => {
    const limiter = createRateLimiter({ burst: 2, perSecond: 10 });
    limiter.take('v', 0);
    const after = [1, 2, 3].map(() => limiter.take('v', 60_000));
    expect(after).toEqual([true, true, false]);
  });

  it('forgets idle keys when many are tracked', () => {
    const limiter = createRateLimiter({ burst: 1, perSecond: 1 });
    for (let i = 0; i < 10_000; i += 1) limiter.take(`k${i}`, 0);
    limiter.take('late', 60_000);
    expect(limiter.size).toBe(1);
  });
});
