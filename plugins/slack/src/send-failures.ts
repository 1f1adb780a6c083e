import { webApi } from '@slack/bolt';

/** Whether a failed Web API call may succeed later, and the wait Slack asked for. */
export interface WebApiFailure {
  /** True when Slack answered 5xx or 429, or could not be reached; false for its refusals. */
  retryable: boolean;
  /** Slack's `Retry-After`, in seconds, when it sent one. */
  retryAfterSeconds?: number;
}

/** The most rate-limit waits one call sits out before it fails (retryable) to the runtime. */
const MAX_RATE_LIMIT_WAITS = 3;
/** A longer `Retry-After` is not waited out here: the send fails, and the runtime's outbox waits. */
const MAX_RATE_LIMIT_WAIT_SECONDS = 60;

/**
 * Classifies what the Web API client threw: a 5xx (with its `Retry-After`, if any), a 429 and an
 * unreachable Slack are worth trying again; Slack's `ok: false` refusals (`channel_not_found`,
 * `not_in_channel`, `invalid_auth`) and anything else are final.
 *
 * @param error - what a `WebClient` call threw
 * @returns whether to try again, and Slack's wait
 */
export function classifyWebApiFailure(error: unknown): WebApiFailure {
  const failure = error as { code?: unknown; statusCode?: unknown; headers?: unknown; retryAfter?: unknown };
  switch (failure.code) {
    case webApi.ErrorCode.RateLimitedError:
      return withWait(true, failure.retryAfter);
    case webApi.ErrorCode.HTTPError: {
      const retryable = typeof failure.statusCode === 'number' && failure.statusCode >= 500;
      const headers = (failure.headers ?? {}) as Record<string, unknown>;
      return withWait(retryable, retryable ? Number(headers['retry-after']) : undefined);
    }
    case webApi.ErrorCode.RequestError:
      return { retryable: true };
    default:
      return { retryable: false };
  }
}

/**
 * Makes a Web API call, waiting out Slack's rate limits here (up to 3 waits of up to 60 s each), so
 * a long reply's later chunks still follow its first. Every other failure is thrown at once: the
 * client does not try again, the runtime's delivery outbox does.
 *
 * @param call - the call, on a client that rejects rate-limited calls (`rejectRateLimitedCalls`)
 * @returns what the call returned
 * @throws what the call threw, once it is not a rate limit to wait out
 */
export async function waitingOutRateLimits<T>(call: () => Promise<T>): Promise<T> {
  for (let waits = 0; ; waits++) {
    try {
      return await call();
    } catch (error) {
      const { code, retryAfter } = error as { code?: unknown; retryAfter?: unknown };
      const seconds = typeof retryAfter === 'number' ? retryAfter : Number.NaN;
      const waitable = seconds >= 0 && seconds <= MAX_RATE_LIMIT_WAIT_SECONDS;
      if (code !== webApi.ErrorCode.RateLimitedError || !waitable || waits >= MAX_RATE_LIMIT_WAITS)
        throw error;
      await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    }
  }
}

function withWait(retryable: boolean, seconds: unknown): WebApiFailure {
  return typeof seconds === 'number' && Number.isFinite(seconds) && seconds >= 0
    ? { retryable, retryAfterSeconds: seconds }
    : { retryable };
}
