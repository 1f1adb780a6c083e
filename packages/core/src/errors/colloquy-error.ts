const MARK = Symbol.for('colloquy.error');

/**
 * Stable machine-readable error codes. Branch on these, never on messages.
 */
export type ErrorCode =
  | 'INVALID_ARGUMENT'
  | 'CONFIG_INVALID'
  | 'SESSION_NOT_FOUND'
  | 'RUN_NOT_FOUND'
  | 'FORBIDDEN'
  | 'SEND_DENIED'
  | 'RATE_LIMITED'
  | 'TIMEOUT'
  | 'ABORTED'
  | 'CONFLICT'
  | 'NOT_SUPPORTED'
  | 'UNAUTHORIZED'
  | 'MODEL_ERROR'
  | 'CHANNEL_ERROR'
  | 'TOOL_ERROR'
  | 'STORE_ERROR'
  | 'STORE_CORRUPT'
  | 'STORE_VERSION'
  | 'STORE_LOCKED'
  | 'INTERNAL';

/**
 * The one error family Colloquy library code throws. The message says what to do next;
 * `code` is stable, `details` is structured context, `cause` is the original error.
 *
 * @example
 * ```ts
 * throw new ColloquyError('SESSION_NOT_FOUND', `No session "${key}". List sessions with sessions_list.`, { key });
 * ```
 */
export class ColloquyError extends Error {
  /** Always `ColloquyError`. */
  override readonly name = 'ColloquyError';
  /** Marks the error for {@link isColloquyError}, across installed copies of the package. */
  readonly [MARK] = true;

  /**
   * @param code - what went wrong, for callers that branch on it
   * @param message - a sentence saying what went wrong and what to do about it
   * @param details - JSON-serialisable facts about the failure (e.g. `key`, `field`)
   * @param options - `cause`: the error this one wraps
   */
  constructor(
    /** What went wrong, for callers that branch on it. */
    readonly code: ErrorCode,
    message: string,
    /** JSON-serialisable facts about the failure (e.g. `key`, `field`, `retryAfterMs`). */
    readonly details: Record<string, unknown> = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  /** A plain JSON form, for RPC frames and logs. */
  toJSON(): { name: 'ColloquyError'; code: ErrorCode; message: string; details: Record<string, unknown> } {
    return { name: this.name, code: this.code, message: this.message, details: this.details };
  }
}

/**
 * True for any `ColloquyError`, even one thrown by another installed copy of `@colloquy/core`
 * (where `instanceof` would fail).
 */
export const isColloquyError = (e: unknown): e is ColloquyError =>
  typeof e === 'object' && e !== null && MARK in e;

/**
 * Wraps any thrown value as a `ColloquyError`, keeping it as `cause`. Colloquy errors pass through.
 *
 * @param e - the caught value
 * @param code - the code to use when `e` is not already a `ColloquyError` (default `INTERNAL`)
 */
export function toColloquyError(e: unknown, code: ErrorCode = 'INTERNAL'): ColloquyError {
  if (isColloquyError(e)) return e;
  const message = e instanceof Error ? e.message : String(e);
  return new ColloquyError(code, message, {}, { cause: e });
}
