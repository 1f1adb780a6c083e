import { isColloquyError } from '../errors/colloquy-error.js';
import { type BackoffOptions, backoffDelay, sleep } from './backoff.js';

/** Options of {@link receiveUntilStored}. */
export interface ReceiveUntilStoredOptions {
  /** Ends the retries (the plugin stops); the last refusal is then thrown. */
  signal: AbortSignal;
  /** The waits between tries. Default 500 ms doubling to 10 s. */
  backoff?: BackoffOptions;
  /** Called after each refusal that is retried, with the error and the number of the try that failed (0 first). */
  onRetry?(error: unknown, attempt: number): void;
}

const DEFAULT_BACKOFF: BackoffOptions = { initialDelayMs: 500, maxDelayMs: 10_000 };

/**
 * Hands an inbound message to the runtime until it is stored, for a platform that cannot deliver a
 * message again (the Discord gateway, a WhatsApp socket whose library acknowledged it on arrival):
 * a refusal because the store failed (`STORE_ERROR`, `STORE_LOCKED`: the database restarting or
 * busy) is retried with backoff while `signal` is not aborted. Any other refusal (`ABORTED` from a
 * runtime that is shutting down, a message the runtime rejects) is thrown at once: trying again
 * would not change it. Platforms that redeliver what was not acknowledged (Telegram, webhooks)
 * should refuse instead, and let the platform retry.
 *
 * @param receive - `ctx.receive`
 * @param message - the message
 * @param options - the signal that ends the retries, the backoff, a retry hook
 * @returns once the message is stored
 * @throws the refusal that is not retried, or the last one once `signal` aborted
 * @example
 * ```ts
 * await receiveUntilStored((m) => ctx.receive(m), inbound, { signal: stopping.signal });
 * ```
 */
export async function receiveUntilStored<T>(
  receive: (message: T) => Promise<void>,
  message: T,
  options: ReceiveUntilStoredOptions,
): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await receive(message);
      return;
    } catch (error) {
      if (!isStoreFailure(error) || options.signal.aborted) throw error;
      options.onRetry?.(error, attempt);
      await sleep(backoffDelay(attempt, options.backoff ?? DEFAULT_BACKOFF), options.signal).catch(() => {});
      if (options.signal.aborted) throw error;
    }
  }
}

function isStoreFailure(error: unknown): boolean {
  return isColloquyError(error) && (error.code === 'STORE_ERROR' || error.code === 'STORE_LOCKED');
}
