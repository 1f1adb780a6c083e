/**
 * Exponential backoff: how long to wait before the next attempt of something that failed, and an
 * abortable wait. Pure apart from the timer; every reconnect and retry loop in Colloquy uses it.
 */

/** How delays grow between attempts. */
export interface BackoffOptions {
  /** The delay before the first retry (attempt 0). Default 1000 ms. */
  initialDelayMs?: number;
  /** No delay is longer than this, jitter included. Default 60000 ms. */
  maxDelayMs?: number;
  /** Each attempt waits this many times longer than the previous one. Default 2. */
  factor?: number;
  /**
   * The share of each delay taken off at random, so clients that failed together do not retry
   * together: `0.2` waits between 80 % and 100 % of the delay, `0` waits exactly. Default 0.2.
   */
  jitter?: number;
  /** The random source, in [0, 1). Default `Math.random`; tests pass a fixed one. */
  random?: () => number;
}

/**
 * The delay before retry number `attempt` (0-based): `initialDelayMs * factor ** attempt`, capped at
 * `maxDelayMs`, minus up to `jitter` of it at random, rounded to whole milliseconds.
 *
 * @param attempt - how many retries came before this one (0 for the first retry)
 * @param options - growth, cap, jitter and the random source
 * @returns the delay in milliseconds, never more than `maxDelayMs`
 * @example
 * ```ts
 * backoffDelay(3, { initialDelayMs: 500, maxDelayMs: 10_000, jitter: 0 }); // 4000
 * const timer = setTimeout(reconnect, backoffDelay(attempt++, { initialDelayMs: 1000 }));
 * ```
 */
export function backoffDelay(attempt: number, options: BackoffOptions = {}): number {
  const initial = options.initialDelayMs ?? 1000;
  const max = options.maxDelayMs ?? 60_000;
  const factor = options.factor ?? 2;
  const jitter = Math.min(1, Math.max(0, options.jitter ?? 0.2));
  const random = options.random ?? Math.random;
  // Past 64 doublings every delay is the cap; stopping there keeps the power finite.
  const grown = initial * factor ** Math.min(Math.max(0, attempt), 64);
  const capped = Math.min(max, Number.isFinite(grown) ? grown : max);
  return Math.round(capped * (1 - jitter * random()));
}

/**
 * Waits `ms` milliseconds, or until `signal` aborts.
 *
 * @param ms - how long to wait
 * @param signal - cancels the wait
 * @returns a promise that resolves after the wait
 * @throws the signal's `reason` (rejects) when it aborts first, also when it is already aborted
 * @example
 * ```ts
 * await sleep(backoffDelay(attempt), request.signal);
 * ```
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
