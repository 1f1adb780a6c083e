import { isColloquyError } from '@colloquy/core';

/** Whether a failed send may succeed when tried again, and how long the platform asked to wait. */
export interface SendFailureClass {
  retryable: boolean;
  /** The platform's own wait (a 429's `retry_after`), when it gave one. */
  retryAfterMs?: number;
}

/**
 * Socket and HTTP-client error codes of a platform that is down or unreachable for now: the
 * connection was refused, reset or timed out, or the name did not resolve for the moment.
 */
const TRANSIENT_NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_SOCKET',
]);

/** How deep the cause chain is searched for a network error code. */
const MAX_CAUSE_DEPTH = 8;

/**
 * Classifies what a channel plugin's `send` threw:
 * - a `ColloquyError` with a non-empty `details.sentMessageIds` is final: some chunks of the
 *   message were sent, and sending it again would repeat them;
 * - a `ColloquyError` whose `details.retryable` is a boolean says so itself (a plugin sets it
 *   from the platform's answer: 5xx and 429 retryable, "chat not found" or "bot blocked" final),
 *   with `details.retryAfterMs` or `details.retryAfterSeconds` when the platform gave a wait;
 * - `RATE_LIMITED` and `TIMEOUT` are retryable;
 * - a refused, reset or timed-out connection anywhere in the cause chain is retryable;
 * - anything else is final: sending it again would fail the same way, or send it twice.
 *
 * @param error - what `send` threw
 * @returns whether to try again, and the platform's wait
 */
export function classifySendFailure(error: unknown): SendFailureClass {
  if (isColloquyError(error)) {
    // Part of a long message went out: sending it again would repeat that part.
    const sent = error.details.sentMessageIds;
    if (Array.isArray(sent) && sent.length > 0) return { retryable: false };
    const retryAfterMs = retryAfterOf(error.details);
    const wait = retryAfterMs !== undefined ? { retryAfterMs } : {};
    if (typeof error.details.retryable === 'boolean') return { retryable: error.details.retryable, ...wait };
    if (error.code === 'RATE_LIMITED' || error.code === 'TIMEOUT') return { retryable: true, ...wait };
  }
  return { retryable: hasTransientNetworkCode(error) };
}

function retryAfterOf(details: Record<string, unknown>): number | undefined {
  const { retryAfterMs, retryAfterSeconds } = details;
  if (typeof retryAfterMs === 'number' && retryAfterMs >= 0) return retryAfterMs;
  if (typeof retryAfterSeconds === 'number' && retryAfterSeconds >= 0) return retryAfterSeconds * 1000;
  return undefined;
}

function hasTransientNetworkCode(error: unknown): boolean {
  let current = error;
  for (let depth = 0; depth < MAX_CAUSE_DEPTH && typeof current === 'object' && current !== null; depth++) {
    const { code, cause } = current as { code?: unknown; cause?: unknown; error?: unknown };
    if (typeof code === 'string' && TRANSIENT_NETWORK_CODES.has(code)) return true;
    // grammY's HttpError keeps the fetch failure in `error`, not `cause`.
    current = cause ?? (current as { error?: unknown }).error;
  }
  return false;
}
