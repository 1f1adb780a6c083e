import { isColloquyError } from '@colloquy/core';

/**
 * True for a store refusal that passes by itself: a full disk (`details.reason: 'disk-full'`, the
 * SQLite store resumes once there is room) or a store that marks the failure `details.retryable`
 * (PostgreSQL's lost or refused connections). Other store errors are final.
 *
 * @param error - what a store call threw
 * @returns whether trying again later may succeed
 */
export function isPassingStoreRefusal(error: unknown): boolean {
  if (!isColloquyError(error) || error.code !== 'STORE_ERROR') return false;
  const details = error.details as { reason?: unknown; retryable?: unknown } | undefined;
  return details?.reason === 'disk-full' || details?.retryable === true;
}

/** The pauses between tries: 0.25 s doubling to 30 s, then every 30 s, about 10 minutes in all. */
const PAUSES_MS = [250, 500, 1000, 2000, 4000, 8000, 15_000, ...Array<number>(19).fill(30_000)];

/**
 * Runs `write`, and runs it again while the store refuses it for a reason that passes by itself
 * ({@link isPassingStoreRefusal}), pausing between tries, until it succeeds, fails otherwise, the
 * pauses run out or `stillWanted` says no (the runtime is shutting down).
 *
 * @param write - the store write; it must be safe to run again after it failed
 * @param stillWanted - checked before each new try
 * @param onRefused - told of each refusal that will be tried again
 * @param pausesMs - the pauses between tries (default: 0.25 s doubling to 30 s, about 10 minutes)
 * @returns what `write` returned
 * @throws the last error when it is final or the tries are over
 */
export async function retryingPassingRefusals<T>(
  write: () => Promise<T>,
  stillWanted: () => boolean,
  onRefused: (error: unknown, attempt: number) => void,
  pausesMs: readonly number[] = PAUSES_MS,
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await write();
    } catch (error) {
      const pause = pausesMs[attempt];
      if (!isPassingStoreRefusal(error) || pause === undefined || !stillWanted()) throw error;
      onRefused(error, attempt + 1);
      await new Promise((resolve) => setTimeout(resolve, pause));
      if (!stillWanted()) throw error;
    }
  }
}
