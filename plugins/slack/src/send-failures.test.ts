import { webApi } from '@slack/bolt';
import { describe, expect, it } from 'vitest';
import { classifyWebApiFailure, waitingOutRateLimits } from './send-failures.js';

const http = (status: number, headers: Record<string, string> = {}) =>
  new webApi.WebAPIHTTPError(status, 'status', headers, '');

describe('classifyWebApiFailure', () => {
  it('retries a 5xx, with its Retry-After when Slack sent one', () => {
    expect(classifyWebApiFailure(http(502))).toEqual({ retryable: true });
    expect(classifyWebApiFailure(http(503, { 'retry-after': '7' }))).toEqual({
      retryable: true,
      retryAfterSeconds: 7,
    });
  });

  it('retries a rate limit after its wait, and an unreachable Slack', () => {
    expect(classifyWebApiFailure(new webApi.WebAPIRateLimitedError(30))).toEqual({
      retryable: true,
      retryAfterSeconds: 30,
    });
    const reset = Object.assign(new Error('fetch failed'), { code: 'ECONNRESET' });
    expect(classifyWebApiFailure(new webApi.WebAPIRequestError(reset))).toEqual({ retryable: true });
  });

  it('takes Slack’s refusals, other statuses and unknown errors as final', () => {
    const refused = new webApi.WebAPIPlatformError({ ok: false, error: 'channel_not_found' });
    expect(classifyWebApiFailure(refused)).toEqual({ retryable: false });
    expect(classifyWebApiFailure(http(404, { 'retry-after': '5' }))).toEqual({ retryable: false });
    expect(classifyWebApiFailure(new Error('boom'))).toEqual({ retryable: false });
  });
});

describe('waitingOutRateLimits', () => {
  it('waits out a rate limit for its Retry-After, then makes the call again', async () => {
    const answers: Array<() => string> = [
      () => {
        throw new webApi.WebAPIRateLimitedError(0.05);
      },
      () => 'posted',
    ];
    const started = performance.now();
    await expect(waitingOutRateLimits(async () => answers.shift()!())).resolves.toBe('posted');
    expect(performance.now() - started).toBeGreaterThanOrEqual(45);
    expect(answers).toHaveLength(0);
  });

  /** How many calls `waitingOutRateLimits` makes of a call that always throws `error`. */
  async function callsUntilItThrows(error: Error): Promise<number> {
    let calls = 0;
    const failing = async () => {
      calls += 1;
      throw error;
    };
    await expect(waitingOutRateLimits(failing)).rejects.toBe(error);
    return calls;
  }

  it('throws any other failure at once, and a rate limit after three waits', async () => {
    expect(await callsUntilItThrows(http(502))).toBe(1);
    expect(await callsUntilItThrows(new webApi.WebAPIRateLimitedError(0))).toBe(4);
  });

  it('leaves a Retry-After over a minute to the runtime instead of waiting it out', async () => {
    expect(await callsUntilItThrows(new webApi.WebAPIRateLimitedError(120))).toBe(1);
  });
});
