import { APICallError, JSONParseError } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import { classifyModelError, retryAfterFromHeaders } from './model-errors.js';

const ctx = { provider: 'p', model: 'm', attempts: 1, partial: false, baseURL: 'http://127.0.0.1:9/v1' };

function apiError(statusCode: number | undefined, headers: Record<string, string> = {}, cause?: unknown) {
  return new APICallError({
    message: `HTTP ${statusCode}`,
    url: 'http://127.0.0.1:9/v1/chat/completions',
    requestBodyValues: {},
    ...(statusCode !== undefined ? { statusCode } : {}),
    responseHeaders: headers,
    responseBody: JSON.stringify({ error: { message: 'upstream says no' } }),
    ...(cause ? { cause } : {}),
  });
}

describe('retryAfterFromHeaders', () => {
  it('prefers retry-after-ms, then seconds, then an HTTP date', async () => {
    expect(retryAfterFromHeaders({ 'retry-after-ms': '250', 'retry-after': '9' })).toBe(250);
    expect(retryAfterFromHeaders({ 'Retry-After': '1.5' })).toBe(1500);
    const now = Date.parse('2030-01-01T00:00:00Z');
    expect(retryAfterFromHeaders({ 'retry-after': 'Tue, 01 Jan 2030 00:00:10 GMT' }, now)).toBe(10_000);
    expect(retryAfterFromHeaders({ 'retry-after': 'soon' })).toBeUndefined();
    expect(retryAfterFromHeaders(undefined)).toBeUndefined();
  });
});

describe('classifyModelError', () => {
  it('quotes the provider message and marks 5xx retryable', async () => {
    const { error, retryable } = classifyModelError(apiError(503), ctx);
    expect(retryable).toBe(true);
    expect(error.code).toBe('MODEL_ERROR');
    expect(error.message).toContain('upstream says no');
  });

  it('never retries once output started', async () => {
    const { retryable, error } = classifyModelError(apiError(503), { ...ctx, partial: true });
    expect(retryable).toBe(false);
    expect(error.details.partial).toBe(true);
  });

  it('marks 400 and 404 final, with a hint for 404', async () => {
    expect(classifyModelError(apiError(400), ctx).retryable).toBe(false);
    const notFound = classifyModelError(apiError(404), ctx);
    expect(notFound.reason).toBe('not-found');
    expect(notFound.error.message).toContain('models.providers.p.baseURL');
  });

  it('treats an unparsable 200 body as malformed', async () => {
    const parse = new JSONParseError({ text: '{', cause: new SyntaxError('Unexpected end') });
    expect(classifyModelError(apiError(200, {}, parse), ctx).reason).toBe('malformed-response');
  });

  it('reports caller aborts and timeouts with their own codes', async () => {
    expect(classifyModelError(new Error('x'), ctx, { by: 'caller', reason: 'stop' }).error.code).toBe(
      'ABORTED',
    );
    const timeout = classifyModelError(new Error('x'), ctx, { by: 'timeout', kind: 'idle', timeoutMs: 10 });
    expect(timeout.error.code).toBe('TIMEOUT');
    expect(timeout.error.message).toContain('http://127.0.0.1:9/v1');
  });

  it('keeps the original error as cause', async () => {
    const original = apiError(500);
    expect(classifyModelError(original, ctx).error.cause).toBe(original);
  });
});
