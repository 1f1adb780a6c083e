import type { IncomingMessage, ServerResponse } from 'node:http';

/** How a fake chat platform fails while an outage lasts (see `FakeTelegram.startOutage`). */
export interface PlatformOutage {
  /** The HTTP status every matching call answers. Default 502 (Bad Gateway). */
  status?: number;
  /**
   * Reset each matching connection without an answer instead, as a server that went away does
   * (the client sees `ECONNRESET`). Default false.
   */
  reset?: boolean;
  /**
   * Send a `Retry-After` header (seconds) with each failed answer, as a platform that says when to
   * come back does. Default none.
   */
  retryAfterSeconds?: number;
}

/**
 * Fails one request of a fake platform during an outage: resets its connection, or answers the
 * outage's status with `body` (and its `Retry-After`, when it has one).
 *
 * @param outage - how the platform fails
 * @param req - the request
 * @param res - its response
 * @param body - the JSON error body the platform sends with the status
 */
export function failRequest(
  outage: PlatformOutage,
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown,
): void {
  if (outage.reset) {
    req.socket.destroy();
    return;
  }
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (outage.retryAfterSeconds !== undefined) headers['retry-after'] = String(outage.retryAfterSeconds);
  res.writeHead(outage.status ?? 502, headers).end(JSON.stringify(body));
}
