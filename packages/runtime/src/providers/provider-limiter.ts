import type { ModelProviderLimits } from '@colloquy/core/model';

/** Defaults of `models.providers.<id>.limits` (rates are unlimited unless set). */
export const PROVIDER_LIMIT_DEFAULTS = { concurrency: 256 } as const;

/** What one model call holds while it talks to the provider. */
export interface ProviderPermit {
  /**
   * Gives the slot back. `usedTokens` (the usage the provider reported) replaces the estimate charged
   * to the tokens-per-minute bucket at acquire time. Idempotent.
   */
  release(usedTokens?: number): void;
}

/** Options of {@link ProviderLimiter.acquire}. */
export interface AcquireOptions {
  /** Stop waiting when this aborts: the promise rejects with `signal.reason`. */
  signal?: AbortSignal | undefined;
  /** Estimated tokens of the call, charged to the tokens-per-minute bucket. Default 0. */
  tokens?: number;
  /**
   * When the provider is paused (a 429) for longer than this, reject at once with `onLongPause(remainingMs)`
   * instead of waiting. Default: always wait.
   */
  maxPauseMs?: number;
  onLongPause?(remainingMs: number): Error;
}

/** Limiter figures for tests and status output. */
export interface ProviderLimiterStats {
  /** Calls holding a permit. */
  active: number;
  /** Calls waiting for one. */
  waiting: number;
  /** How long new calls still wait because of a 429 (0 when not paused). */
  pausedForMs: number;
}

/** Bounds the calls to one provider: a concurrency semaphore, request and token buckets, 429 pauses. */
export interface ProviderLimiter {
  /** Resolves with a permit once the call may start; waiters are served first come, first served. */
  acquire(options?: AcquireOptions): Promise<ProviderPermit>;
  /** Holds every call not yet started for `ms` (a 429's retry-after applies to the whole provider). */
  pause(ms: number): void;
  stats(): ProviderLimiterStats;
}

interface Bucket {
  level: number;
  capacity: number;
  perMs: number;
  at: number;
}

interface Waiter {
  tokens: number;
  options: AcquireOptions;
  resolve(permit: ProviderPermit): void;
  reject(error: unknown): void;
  onAbort?: () => void;
}

/**
 * Creates the limiter of one provider.
 *
 * - `concurrency` (default 256): calls in flight at once; the rest wait in arrival order.
 * - `requestsPerMinute` / `tokensPerMinute`: token buckets refilled continuously, each holding one
 *   second's worth (at least 1), so calls are spread over the minute rather than sent in one burst. A call
 *   whose token estimate exceeds the bucket may start when the bucket is full; the bucket then goes into debt.
 * - {@link ProviderLimiter.pause}: after a 429, no call starts until the retry-after has passed.
 *
 * @param limits - `models.providers.<id>.limits`
 * @param now - a monotonic clock (ms); default `performance.now`, which a wall clock set back or forward does not move
 */
export function createProviderLimiter(
  limits: ModelProviderLimits = {},
  now: () => number = () => performance.now(),
): ProviderLimiter {
  const concurrency = Math.max(1, limits.concurrency ?? PROVIDER_LIMIT_DEFAULTS.concurrency);
  const requests = bucket(limits.requestsPerMinute);
  const tokens = bucket(limits.tokensPerMinute);
  const queue: Waiter[] = [];
  let active = 0;
  let pausedUntil = 0;
  let timer: NodeJS.Timeout | undefined;

  function bucket(perMinute: number | undefined): Bucket | undefined {
    if (perMinute === undefined) return undefined;
    const capacity = Math.max(1, perMinute / 60);
    return { level: capacity, capacity, perMs: perMinute / 60_000, at: now() };
  }

  function refill(b: Bucket, t: number): void {
    b.level = Math.min(b.capacity, b.level + (t - b.at) * b.perMs);
    b.at = t;
  }

  /** How long until `b` holds `need` (0: now). */
  function waitFor(b: Bucket | undefined, need: number, t: number): number {
    if (!b) return 0;
    refill(b, t);
    const target = Math.min(need, b.capacity);
    return b.level >= target ? 0 : (target - b.level) / b.perMs;
  }

  function schedule(ms: number): void {
    timer = setTimeout(
      () => {
        timer = undefined;
        pump();
      },
      Math.max(1, Math.ceil(ms)),
    );
  }

  function remove(waiter: Waiter): void {
    const index = queue.indexOf(waiter);
    if (index >= 0) queue.splice(index, 1);
    if (waiter.onAbort) waiter.options.signal?.removeEventListener('abort', waiter.onAbort);
  }

  function grant(waiter: Waiter): ProviderPermit {
    active++;
    if (requests) requests.level -= 1;
    if (tokens) tokens.level -= waiter.tokens;
    let released = false;
    return {
      release(usedTokens) {
        if (released) return;
        released = true;
        active--;
        if (tokens && usedTokens !== undefined) {
          refill(tokens, now());
          tokens.level = Math.min(tokens.capacity, tokens.level + waiter.tokens - usedTokens);
        }
        pump();
      },
    };
  }

  function pump(): void {
    if (timer) {
      clearTimeout(timer);
      timer = undefined;
    }
    const t = now();
    const pausedFor = pausedUntil - t;
    if (pausedFor > 0) {
      for (const waiter of [...queue]) {
        const { maxPauseMs, onLongPause } = waiter.options;
        if (maxPauseMs !== undefined && onLongPause && pausedFor > maxPauseMs) {
          remove(waiter);
          waiter.reject(onLongPause(pausedFor));
        }
      }
      if (queue.length > 0) schedule(pausedFor);
      return;
    }
    while (queue.length > 0 && active < concurrency) {
      const head = queue[0]!;
      const wait = Math.max(waitFor(requests, 1, t), waitFor(tokens, head.tokens, t));
      if (wait > 0) {
        schedule(wait);
        return;
      }
      remove(head);
      head.resolve(grant(head));
    }
  }

  return {
    acquire(options = {}) {
      const { signal } = options;
      if (signal?.aborted) return Promise.reject(signal.reason);
      return new Promise<ProviderPermit>((resolve, reject) => {
        const waiter: Waiter = { tokens: Math.max(0, options.tokens ?? 0), options, resolve, reject };
        if (signal) {
          waiter.onAbort = () => {
            remove(waiter);
            reject(signal.reason);
            pump();
          };
          signal.addEventListener('abort', waiter.onAbort, { once: true });
        }
        queue.push(waiter);
        pump();
      });
    },

    pause(ms) {
      if (!(ms > 0)) return;
      pausedUntil = Math.max(pausedUntil, now() + ms);
      pump();
    },

    stats: () => ({ active, waiting: queue.length, pausedForMs: Math.max(0, pausedUntil - now()) }),
  };
}
