/** A keyed token-bucket rate limiter. */
export interface RateLimiter {
  /**
   * Takes one token for `key`; false when the bucket is empty (the action is refused). `now` is a
   * monotonic reading in ms (default `performance.now()`), so a wall clock set back or forward
   * neither locks a client out nor hands it a fresh burst.
   */
  take(key: string, now?: number): boolean;
  /** How many keys are tracked (for tests). */
  readonly size: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

const MAX_KEYS = 10_000;

/**
 * Creates a limiter that allows bursts of `burst` actions per key and refills `perSecond` tokens a second.
 * Full buckets are forgotten when many keys are tracked, so memory stays bounded.
 *
 * @param options - bucket size and refill rate
 * @returns the limiter
 */
export function createRateLimiter(options: { burst: number; perSecond: number }): RateLimiter {
  const buckets = new Map<string, Bucket>();
  const refill = (bucket: Bucket, now: number): void => {
    const elapsed = Math.max(0, now - bucket.at) / 1000;
    bucket.tokens = Math.min(options.burst, bucket.tokens + elapsed * options.perSecond);
    bucket.at = now;
  };
  // A Map, not lru-cache: only refilled buckets may go; dropping the least recently used one would
  // hand a client that is being limited a fresh burst.
  const prune = (now: number): void => {
    for (const [key, bucket] of buckets) {
      refill(bucket, now);
      if (bucket.tokens >= options.burst) buckets.delete(key);
    }
  };
  return {
    take(key, now = performance.now()) {
      let bucket = buckets.get(key);
      if (!bucket) {
        if (buckets.size >= MAX_KEYS) prune(now);
        bucket = { tokens: options.burst, at: now };
        buckets.set(key, bucket);
      } else {
        refill(bucket, now);
      }
      if (bucket.tokens < 1) return false;
      bucket.tokens -= 1;
      return true;
    },
    get size() {
      return buckets.size;
    },
  };
}
