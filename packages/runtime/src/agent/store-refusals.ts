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

/**
 * The pauses between tries of a write the store refused for a reason that passes by itself:
 * 0.25 s doubling to 30 s, then every 30 s, about 10 minutes in all.
 */
export const STORE_REFUSAL_PAUSES_MS: readonly number[] = [
  250,
  500,
  1000,
  2000,
  4000,
  8000,
  15_000,
  ...Array<number>(19).fill(30_000),
];
