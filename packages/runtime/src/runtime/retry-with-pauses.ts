/** When and how often {@link retryWithPauses} tries again. */
export interface RetryPolicy {
  /** The pauses before each new try; the last error is thrown once they run out. */
  readonly pausesMs: readonly number[];
  /** Whether this error is worth another try now (checked again after the pause). */
  retries(error: unknown): boolean;
  /** Told of each failure that will be tried again; `attempt` counts from 1. */
  onRetry?(error: unknown, attempt: number): void;
}

/**
 * Runs `attempt`, and runs it again after each pause of `policy` while it fails with an error the
 * policy retries.
 *
 * @param attempt - the work; it must be safe to run again after it failed
 * @param policy - the pauses and which errors are worth another try
 * @returns what `attempt` returned
 * @throws the last error, once the policy does not retry it or the pauses ran out
 */
export async function retryWithPauses<T>(attempt: () => Promise<T>, policy: RetryPolicy): Promise<T> {
  for (let tries = 0; ; tries++) {
    try {
      return await attempt();
    } catch (error) {
      const pause = policy.pausesMs[tries];
      if (pause === undefined || !policy.retries(error)) throw error;
      policy.onRetry?.(error, tries + 1);
      await new Promise((resolve) => setTimeout(resolve, pause));
      if (!policy.retries(error)) throw error;
    }
  }
}
