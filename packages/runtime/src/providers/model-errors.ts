import { APICallError, JSONParseError, TypeValidationError } from '@ai-sdk/provider';
import { ColloquyError, isColloquyError } from '@colloquy/core';
import type { MissedDeadline } from './call-deadlines.js';

/** Where a failure happened, for messages and `details`. */
export interface ModelErrorContext {
  /** The provider id (the key under `models.providers`). */
  provider: string;
  /** The model id sent to the provider. */
  model: string;
  /** The provider's API root, when known. */
  baseURL?: string;
  /** The environment variable that holds the key, when configured. */
  apiKeyEnv?: string;
  /** Attempts made so far, including the failing one. */
  attempts: number;
  /** True once text or a tool call was streamed to the caller. */
  partial: boolean;
}

/** Why a model call failed; `details.reason` of the thrown `ColloquyError`. */
export type ModelFailureReason =
  | 'unauthorized'
  | 'rate-limited'
  | 'server-error'
  | 'bad-request'
  | 'not-found'
  | 'network'
  | 'timeout'
  | 'aborted'
  | 'malformed-response'
  | 'stream-interrupted'
  | 'circuit-open'
  | 'unknown';

/** Failures that say the provider is down or struggling: the ones its circuit breaker counts. */
const PROVIDER_FAILURES: ReadonlySet<ModelFailureReason> = new Set([
  'server-error',
  'network',
  'timeout',
  'stream-interrupted',
]);

/**
 * True when a failure is the provider's (a timeout, a 5xx, a refused or broken connection), not the
 * request's (4xx, content) or the caller's (abort). A 429 is not one either: the limiter handles it.
 */
export function isProviderFailure(reason: ModelFailureReason): boolean {
  return PROVIDER_FAILURES.has(reason);
}

/** A classified failure: the error to throw and whether a retry may help. */
export interface ClassifiedModelError {
  error: ColloquyError;
  reason: ModelFailureReason;
  /** A retry may succeed (429, 5xx, 408, network). Never true for 401/403 or after output started. */
  retryable: boolean;
  /** The wait the server asked for (429 `retry-after` / `retry-after-ms`), in ms. */
  retryAfterMs?: number;
}

/**
 * Turns whatever a model call threw (AI SDK `APICallError`, JSON or schema errors, network failures,
 * aborts) into a `ColloquyError` whose message says what to do next.
 *
 * @param cause - the thrown value
 * @param ctx - where it happened
 * @param abort - what aborted the call, if anything: the caller's signal or the idle timeout
 * @returns the error to throw, its reason and whether it is retryable
 */
export function classifyModelError(
  cause: unknown,
  ctx: ModelErrorContext,
  abort?: { by: 'caller'; reason?: unknown } | ({ by: 'timeout' } & MissedDeadline),
): ClassifiedModelError {
  const where = `model "${ctx.model}" of provider "${ctx.provider}"`;
  const base = { provider: ctx.provider, model: ctx.model, attempts: ctx.attempts, partial: ctx.partial };

  if (abort?.by === 'caller') {
    const why =
      abort.reason instanceof Error ? abort.reason.message : abort.reason ? String(abort.reason) : '';
    return make('ABORTED', 'aborted', false, `The call to ${where} was aborted${why ? `: ${why}` : ''}.`, {});
  }
  if (abort?.by === 'timeout') {
    const what = {
      'first-byte': [`sent no response within ${abort.timeoutMs} ms`, 'firstByteMs'],
      idle: [`sent nothing for ${abort.timeoutMs} ms`, 'idleMs'],
      total: [`did not finish within ${abort.timeoutMs} ms`, 'totalMs'],
    }[abort.kind];
    return make(
      'TIMEOUT',
      'timeout',
      false,
      `${cap(where)} ${what[0]}. Check that the server${ctx.baseURL ? ` at ${ctx.baseURL}` : ''} is up, or raise models.providers.${ctx.provider}.timeouts.${what[1]}.`,
      { timeoutMs: abort.timeoutMs, deadline: abort.kind },
    );
  }
  if (isColloquyError(cause)) {
    return { error: cause, reason: 'unknown', retryable: false };
  }

  if (APICallError.isInstance(cause)) {
    const status = cause.statusCode;
    const detail = providerMessage(cause);
    const http = status !== undefined ? { status, url: cause.url } : { url: cause.url };
    if (
      JSONParseError.isInstance(cause.cause) ||
      TypeValidationError.isInstance(cause.cause) ||
      (status !== undefined && status < 300)
    ) {
      return malformed(cause);
    }
    if (status === 401 || status === 403) {
      const keyHint = ctx.apiKeyEnv
        ? `check the key in the environment variable ${ctx.apiKeyEnv}`
        : `set models.providers.${ctx.provider}.apiKey or apiKeyEnv`;
      return make(
        'MODEL_ERROR',
        'unauthorized',
        false,
        `${cap(where)} rejected the API key (HTTP ${status}${detail ? `: ${detail}` : ''}); ${keyHint}.`,
        http,
      );
    }
    if (status === 429) {
      const retryAfterMs = retryAfterFromHeaders(cause.responseHeaders);
      const wait = retryAfterMs !== undefined ? ` Retry after ${Math.ceil(retryAfterMs / 1000)} s.` : '';
      const result = make(
        'RATE_LIMITED',
        'rate-limited',
        true,
        `${cap(where)} is rate limited (HTTP 429${detail ? `: ${detail}` : ''}).${wait}`,
        { ...http, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) },
      );
      return retryAfterMs !== undefined ? { ...result, retryAfterMs } : result;
    }
    if (status !== undefined && (status >= 500 || status === 408)) {
      return make(
        'MODEL_ERROR',
        'server-error',
        true,
        `${cap(where)} failed with HTTP ${status}${detail ? `: ${detail}` : ''}. The provider is having trouble; try again later.`,
        http,
      );
    }
    if (status === 404) {
      return make(
        'MODEL_ERROR',
        'not-found',
        false,
        `${cap(where)} was not found (HTTP 404${detail ? `: ${detail}` : ''}). Check the model name and models.providers.${ctx.provider}.baseURL.`,
        http,
      );
    }
    if (status !== undefined) {
      return make(
        'MODEL_ERROR',
        'bad-request',
        false,
        `${cap(where)} refused the request (HTTP ${status}${detail ? `: ${detail}` : ''}).`,
        http,
      );
    }
    const code = networkCode(cause);
    return make(
      'MODEL_ERROR',
      'network',
      true,
      `Cannot reach ${where} at ${cause.url}${code ? ` (${code})` : ''}: ${cause.message}. Is the server running and models.providers.${ctx.provider}.baseURL right?`,
      { url: cause.url, ...(code ? { errno: code } : {}) },
    );
  }

  if (JSONParseError.isInstance(cause) || TypeValidationError.isInstance(cause)) return malformed(cause);

  const code = networkCode(cause);
  if (code) {
    return make(
      'MODEL_ERROR',
      ctx.partial ? 'stream-interrupted' : 'network',
      !ctx.partial,
      ctx.partial
        ? `The stream from ${where} broke off (${code}) after output started; the turn is incomplete.`
        : `Cannot reach ${where}${ctx.baseURL ? ` at ${ctx.baseURL}` : ''} (${code}). Is the server running?`,
      { errno: code },
    );
  }
  const message = cause instanceof Error ? cause.message : String(cause);
  return make('MODEL_ERROR', 'unknown', false, `The call to ${where} failed: ${message}`, {});

  function malformed(err: Error): ClassifiedModelError {
    return make(
      'MODEL_ERROR',
      'malformed-response',
      false,
      `${cap(where)} sent a response that is not valid (${firstLine(err.message)}). Is models.providers.${ctx.provider}.kind right for this server?`,
      {},
    );
  }

  function make(
    code: 'MODEL_ERROR' | 'RATE_LIMITED' | 'TIMEOUT' | 'ABORTED',
    reason: ModelFailureReason,
    retryable: boolean,
    message: string,
    extra: Record<string, unknown>,
  ): ClassifiedModelError {
    const canRetry = retryable && !ctx.partial;
    return {
      error: new ColloquyError(code, message, { ...base, reason, retryable: canRetry, ...extra }, { cause }),
      reason,
      retryable: canRetry,
    };
  }
}

/**
 * The error of a call refused because the provider's circuit breaker is open (it failed
 * `circuitBreaker.failureThreshold` times in a row): `MODEL_ERROR`, `reason: 'circuit-open'`,
 * `details.retryAfterMs` the time until a probe is let through.
 *
 * @param ctx - where it happened
 * @param retryAfterMs - the time until the circuit lets a probe through
 */
export function circuitOpenError(ctx: ModelErrorContext, retryAfterMs: number): ColloquyError {
  return new ColloquyError(
    'MODEL_ERROR',
    `Provider "${ctx.provider}" is not answering (it failed several times in a row), so model "${ctx.model}" was not called; the next try goes out in ${Math.ceil(retryAfterMs / 1000)} s. Check that the server${ctx.baseURL ? ` at ${ctx.baseURL}` : ''} is up; models.providers.${ctx.provider}.circuitBreaker tunes this.`,
    {
      provider: ctx.provider,
      model: ctx.model,
      attempts: ctx.attempts,
      partial: false,
      reason: 'circuit-open',
      retryable: false,
      retryAfterMs,
    },
  );
}

/**
 * Reads how long a server asks to wait: `retry-after-ms`, then `retry-after` in seconds or as an
 * HTTP date.
 *
 * @returns milliseconds (never negative), or `undefined` when no usable header is present
 */
export function retryAfterFromHeaders(
  headers: Readonly<Record<string, string | undefined>> | undefined,
  now: number = Date.now(),
): number | undefined {
  if (!headers) return undefined;
  const lower: Record<string, string | undefined> = {};
  for (const [key, value] of Object.entries(headers)) lower[key.toLowerCase()] = value;
  const ms = Number.parseFloat(lower['retry-after-ms'] ?? '');
  if (Number.isFinite(ms) && ms >= 0) return Math.round(ms);
  const raw = lower['retry-after']?.trim();
  if (!raw) return undefined;
  if (/^\d+(\.\d+)?$/.test(raw)) return Math.round(Number.parseFloat(raw) * 1000);
  const date = Date.parse(raw);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function providerMessage(error: APICallError): string | undefined {
  const data = error.data as { error?: { message?: unknown } | string; message?: unknown } | undefined;
  const fromData =
    typeof data?.error === 'object' && typeof data.error?.message === 'string'
      ? data.error.message
      : typeof data?.error === 'string'
        ? data.error
        : typeof data?.message === 'string'
          ? data.message
          : undefined;
  if (fromData) return fromData;
  if (error.responseBody) {
    try {
      const body = JSON.parse(error.responseBody) as { error?: { message?: unknown } };
      if (typeof body.error?.message === 'string') return body.error.message;
    } catch {
      // not JSON: fall through to the raw (trimmed) body
    }
    return firstLine(error.responseBody).slice(0, 200);
  }
  return undefined;
}

function networkCode(error: unknown): string | undefined {
  const seen = new Set<unknown>();
  let current: unknown = error;
  while (current instanceof Error && !seen.has(current)) {
    seen.add(current);
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^(E[A-Z]+|UND_ERR_[A-Z_]+)$/.test(code)) return code;
    current = current.cause;
  }
  return undefined;
}

function firstLine(text: string): string {
  return text.split('\n')[0] ?? text;
}

function cap(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
