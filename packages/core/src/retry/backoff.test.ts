import { describe, expect, it } from 'vitest';
import { backoffDelay, sleep } from './backoff.js';

const exact = { jitter: 0 };

describe('backoffDelay', () => {
  it('grows by the factor from the initial delay and stops at the cap', () => {
    const options = { initialDelayMs: 100, maxDelayMs: 1000, ...exact };
    expect([0, 1, 2, 3, 4, 10].map((n) => backoffDelay(n, options))).toEqual([
      100, 200, 400, 800, 1000, 1000,
    ]);
    expect(backoffDelay(2, { initialDelayMs: 100, factor: 3, ...exact })).toBe(900);
  });

  it('defaults to 1 s doubling up to 60 s', () => {
    expect(backoffDelay(0, exact)).toBe(1000);
    expect(backoffDelay(6, exact)).toBe(60_000);
  });

  it('takes up to the jitter share off at random and never exceeds the cap', () => {
    const options = { initialDelayMs: 1000, maxDelayMs: 1000, jitter: 0.2 };
    expect(backoffDelay(0, { ...options, random: () => 0 })).toBe(1000);
    expect(backoffDelay(0, { ...options, random: () => 0.5 })).toBe(900);
    expect(backoffDelay(0, { ...options, random: () => 0.999999 })).toBe(800);
    expect(backoffDelay(5, { ...options, random: () => 0 })).toBe(1000);
  });

  it('stays finite and capped for huge attempt numbers and treats negative ones as the first', () => {
    expect(backoffDelay(1e9, { maxDelayMs: 5000, ...exact })).toBe(5000);
    expect(backoffDelay(-3, { initialDelayMs: 70, ...exact })).toBe(70);
  });
});

describe('sleep', () => {
  it('resolves after the wait', async () => {
    await expect(sleep(5)).resolves.toBeUndefined();
  });

  it('rejects with the abort reason when the signal aborts first', async () => {
    const controller = new AbortController();
    const waiting = sleep(60_000, controller.signal);
    controller.abort(new Error('stopped'));
    await expect(waiting).rejects.toThrow('stopped');
  });

  it('rejects at once when the signal is already aborted', async () => {
    await expect(sleep(60_000, AbortSignal.abort(new Error('gone')))).rejects.toThrow('gone');
  });
});
