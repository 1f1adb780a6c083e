import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createProviderLimiter, type ProviderPermit } from './provider-limiter.js';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/** Settles pending promise callbacks without moving the clock. */
const flush = () => vi.advanceTimersByTimeAsync(0);

describe('the provider limiter', () => {
  it('never lets more calls in flight than the concurrency limit, and serves waiters in order', async () => {
    const limiter = createProviderLimiter({ concurrency: 3 });
    let inFlight = 0;
    let maxInFlight = 0;
    const order: number[] = [];
    const call = async (i: number) => {
      const permit = await limiter.acquire();
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      order.push(i);
      await new Promise((resolve) => setTimeout(resolve, 10 + (i % 4)));
      inFlight--;
      permit.release();
    };
    const all = Promise.all(Array.from({ length: 20 }, (_, i) => call(i)));
    await flush();
    expect(limiter.stats()).toMatchObject({ active: 3, waiting: 17 });
    await vi.runAllTimersAsync();
    await all;
    expect(maxInFlight).toBe(3);
    expect(order).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(limiter.stats()).toMatchObject({ active: 0, waiting: 0 });
  });

  it('spreads requests over the minute with the requests-per-minute bucket', async () => {
    const limiter = createProviderLimiter({ requestsPerMinute: 120 }); // 2 per second, bucket of 2
    const startedAt: number[] = [];
    const t0 = Date.now();
    const calls = Array.from({ length: 6 }, async () => {
      const permit = await limiter.acquire();
      startedAt.push(Date.now() - t0);
      permit.release();
    });
    await flush();
    expect(startedAt).toEqual([0, 0]);
    await vi.advanceTimersByTimeAsync(499);
    expect(startedAt).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(startedAt).toHaveLength(3);
    await vi.runAllTimersAsync();
    await Promise.all(calls);
    expect(startedAt).toEqual([0, 0, 500, 1000, 1500, 2000]);
  });

  it('charges estimated tokens, then the reported usage, to the tokens-per-minute bucket', async () => {
    const limiter = createProviderLimiter({ tokensPerMinute: 60_000 }); // 1,000 tokens per second
    const first = await limiter.acquire({ tokens: 400 });
    first.release(1000); // the call used more than estimated: the bucket is empty now
    let second: ProviderPermit | undefined;
    void limiter.acquire({ tokens: 500 }).then((p) => {
      second = p;
    });
    await vi.advanceTimersByTimeAsync(499);
    expect(second).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(second).toBeDefined();
  });

  it('lets a call larger than the token bucket start once the bucket is full', async () => {
    const limiter = createProviderLimiter({ tokensPerMinute: 6000 }); // bucket of 100 tokens
    const big = await limiter.acquire({ tokens: 5000 });
    big.release();
    let next: ProviderPermit | undefined;
    void limiter.acquire({ tokens: 5000 }).then((p) => {
      next = p;
    });
    // The full bucket (100) went 4,900 into debt; refilling to 100 at 100 tokens/s takes 50 s.
    await vi.advanceTimersByTimeAsync(49_999);
    expect(next).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(next).toBeDefined();
  });

  it('rejects a waiting call with the abort reason and gives its turn to the next', async () => {
    const limiter = createProviderLimiter({ concurrency: 1 });
    const holder = await limiter.acquire();
    const controller = new AbortController();
    const aborted = limiter.acquire({ signal: controller.signal });
    const next = limiter.acquire();
    await flush();
    expect(limiter.stats().waiting).toBe(2);
    const reason = new Error('run stopped');
    controller.abort(reason);
    await expect(aborted).rejects.toBe(reason);
    expect(limiter.stats().waiting).toBe(1);
    holder.release();
    const permit = await next;
    expect(limiter.stats()).toMatchObject({ active: 1, waiting: 0 });
    permit.release();
  });

  it('rejects at once when the signal is already aborted', async () => {
    const limiter = createProviderLimiter();
    const reason = new Error('gone');
    await expect(limiter.acquire({ signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(limiter.stats()).toMatchObject({ active: 0, waiting: 0 });
  });

  it('holds every call not yet started while a 429 pause lasts, not only the failing one', async () => {
    const limiter = createProviderLimiter();
    const failing = await limiter.acquire();
    limiter.pause(2000); // the failing call saw `retry-after: 2`
    failing.release();
    const started: number[] = [];
    const t0 = Date.now();
    const others = Array.from({ length: 5 }, async () => {
      const permit = await limiter.acquire();
      started.push(Date.now() - t0);
      permit.release();
    });
    await vi.advanceTimersByTimeAsync(1999);
    expect(started).toEqual([]);
    expect(limiter.stats()).toMatchObject({ waiting: 5, pausedForMs: 1 });
    await vi.advanceTimersByTimeAsync(1);
    await Promise.all(others);
    expect(started).toEqual([2000, 2000, 2000, 2000, 2000]);
  });

  it('ends a pause on time when the wall clock is set an hour back during it', async () => {
    const fakeDateNow = Date.now;
    let wallOffset = 0;
    Date.now = () => fakeDateNow() + wallOffset;
    try {
      const limiter = createProviderLimiter();
      limiter.pause(2000);
      wallOffset = -3_600_000;
      let started = false;
      void limiter.acquire().then((permit) => {
        started = true;
        permit.release();
      });
      await vi.advanceTimersByTimeAsync(2000);
      expect(started).toBe(true);
      expect(limiter.stats().pausedForMs).toBe(0);
    } finally {
      Date.now = fakeDateNow;
    }
  });

  it('a later, longer pause extends the wait; a shorter one does not shorten it', async () => {
    const limiter = createProviderLimiter();
    limiter.pause(1000);
    limiter.pause(300);
    expect(limiter.stats().pausedForMs).toBe(1000);
    limiter.pause(3000);
    let started = false;
    void limiter.acquire().then(() => {
      started = true;
    });
    await vi.advanceTimersByTimeAsync(2999);
    expect(started).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(started).toBe(true);
  });

  it('fails a waiting call fast when the pause is longer than it may wait', async () => {
    const limiter = createProviderLimiter({ concurrency: 1 });
    const holder = await limiter.acquire();
    const tooLong = (ms: number) => new Error(`paused for ${ms} ms`);
    const patient = limiter.acquire({ maxPauseMs: 60_000, onLongPause: tooLong });
    const impatient = limiter.acquire({ maxPauseMs: 1000, onLongPause: tooLong });
    await flush();
    limiter.pause(30_000);
    await expect(impatient).rejects.toThrow('paused for 30000 ms');
    expect(limiter.stats().waiting).toBe(1);
    await expect(limiter.acquire({ maxPauseMs: 1000, onLongPause: tooLong })).rejects.toThrow(/paused/);
    holder.release();
    await vi.advanceTimersByTimeAsync(30_000);
    (await patient).release();
    expect(limiter.stats()).toMatchObject({ active: 0, waiting: 0, pausedForMs: 0 });
  });
});
