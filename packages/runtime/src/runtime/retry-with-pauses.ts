/** When and how often {@link retryWithPauses} tries again. */
export interface RetryPolicy {
  /** The pauses before each new try; the last error is thrown once they run out. */
  readonly pausesMs: readonly number[];
  /** Whether this error is worth another try now (checked again after the pause). */
  retries(error: unknown): boolean;
  /** Told of each failure that will be tried again; `attempt` counts from 1. */
  onRetry?(error: unknown, attempt: number): void;
  /** Ends a pause early, and the retries with it: the last error is thrown once it fires. */
  readonly signal?: AbortSignal;
}

/**
 * Runs `attempt`, and runs it again after each pause of `policy` while it fails with an error the
 * policy retries.
 *
 * @param attempt - the work; it must be safe to run again after it failed
 * @param policy - the pauses and which errors are worth another try
 * @returns what `attempt` returned
 * @throws the last error, once the policy does not retry it, the pauses ran out or its signal fired
 */
export async function retryWithPauses<T>(attempt: () => Promise<T>, policy: RetryPolicy): Promise<T> {
  for (let tries = 0; ; tries++) {
    try {
      return await attempt();
    } catch (error) {
      const pause = policy.pausesMs[tries];
      if (pause === undefined || policy.signal?.aborted || !policy.retries(error)) throw error;
      policy.onRetry?.(error, tries + 1);
      await pauseFor(pause, policy.signal);
      if (policy.signal?.aborted || !policy.retries(error)) throw error;
    }
  }
}

/** Waits `ms`, or until `signal` fires: a pause never holds a shut-down process. */
function pauseFor(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
