import { ColloquyError } from '@colloquy/core';
import { describe, expect, it } from 'vitest';
import { classifySendFailure } from './send-failure.js';

const channelError = (details: Record<string, unknown>, cause?: unknown) =>
  new ColloquyError('CHANNEL_ERROR', 'Telegram refused', details, cause ? { cause } : undefined);

describe('classifySendFailure', () => {
  it("follows the plugin's own verdict, with the platform's wait", () => {
    expect(classifySendFailure(channelError({ retryable: true, retryAfterSeconds: 3 }))).toEqual({
      retryable: true,
      retryAfterMs: 3000,
    });
    expect(classifySendFailure(channelError({ retryable: false, description: 'chat not found' }))).toEqual({
      retryable: false,
    });
  });

  it('never retries a message of which some chunks went out', () => {
    expect(classifySendFailure(channelError({ retryable: true, sentMessageIds: ['1'] }))).toEqual({
      retryable: false,
    });
  });

  it('retries rate limits and timeouts', () => {
    expect(
      classifySendFailure(new ColloquyError('RATE_LIMITED', 'slow down', { retryAfterMs: 500 })),
    ).toEqual({
      retryable: true,
      retryAfterMs: 500,
    });
    expect(classifySendFailure(new ColloquyError('TIMEOUT', 'no answer')).retryable).toBe(true);
  });

  it('retries a refused or reset connection found in the cause chain (grammY keeps it in `error`)', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    expect(
      classifySendFailure(channelError({}, new TypeError('fetch failed', { cause: refused }))).retryable,
    ).toBe(true);
    const httpError = Object.assign(new Error('Network request failed'), {
      error: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }),
    });
    expect(classifySendFailure(httpError).retryable).toBe(true);
  });

  it('treats anything else as final', () => {
    expect(classifySendFailure(new Error('boom')).retryable).toBe(false);
    expect(classifySendFailure(new ColloquyError('FORBIDDEN', 'bot was blocked')).retryable).toBe(false);
    expect(classifySendFailure('a string').retryable).toBe(false);
  });
});
