import { DisconnectReason } from './baileys.js';

/** What to do after the socket closed. */
export type CloseAction =
  | { action: 'reconnect'; immediate: boolean; code: number | undefined; reason: string }
  | { action: 'logged-out'; code: number; reason: string }
  /** The stored session cannot work again (bad session, device mismatch): link the device anew. */
  | { action: 'relink'; code: number; reason: string }
  | { action: 'stop'; code: number; reason: string };

/** The HTTP-like status code Baileys puts on a close error (a Boom), if any. */
export function closeStatusCode(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const output = (error as { output?: { statusCode?: unknown } }).output;
  return typeof output?.statusCode === 'number' ? output.statusCode : undefined;
}

/** Rate-limited: WhatsApp's `rate-overlimit` error. */
const RATE_OVERLIMIT = 429;

/**
 * Status codes of a send that may go through later: the link was closed or lost, or a query timed
 * out (428, 408), WhatsApp asked for a restart (515), was unavailable (503) or rate-limited the
 * account (429).
 */
const TRANSIENT_SEND_CODES: ReadonlySet<number> = new Set([
  DisconnectReason.connectionClosed,
  DisconnectReason.connectionLost,
  DisconnectReason.restartRequired,
  DisconnectReason.unavailableService,
  RATE_OVERLIMIT,
]);

/**
 * Whether what a Baileys send threw may succeed when the message is sent again later (the link is
 * down or WhatsApp is busy for now). A bad session, a logout, a refusal and errors without a
 * status code are final.
 *
 * @param error - what `sendMessage` threw
 * @returns true when the runtime may send the message again
 */
export function isTransientSendFailure(error: unknown): boolean {
  const code = closeStatusCode(error);
  return code !== undefined && TRANSIENT_SEND_CODES.has(code);
}

/**
 * Decides how to react to a closed connection. Logged out stops for good (the link is gone); a bad
 * session (500) and a multi-device mismatch stop and ask for a re-link (retrying would fail the
 * same way forever); replaced and forbidden stop (reconnecting would fight another client or fail
 * again); restart-required (normal right after linking) reconnects at once; everything else
 * reconnects with backoff.
 */
export function classifyClose(error: unknown): CloseAction {
  const code = closeStatusCode(error);
  const message = error instanceof Error && error.message ? error.message : 'connection closed';
  switch (code) {
    case DisconnectReason.loggedOut:
      return { action: 'logged-out', code, reason: message };
    case DisconnectReason.connectionReplaced:
      return {
        action: 'stop',
        code,
        reason:
          'another WhatsApp Web session with these credentials took over; stop the other process, then restart the bot',
      };
    case DisconnectReason.forbidden:
      return {
        action: 'stop',
        code,
        reason: `WhatsApp refused the connection (403: ${message}); check the account on the phone, then restart`,
      };
    case DisconnectReason.badSession:
      return {
        action: 'relink',
        code,
        reason: `WhatsApp rejected the stored session (bad session, 500: ${message})`,
      };
    case DisconnectReason.multideviceMismatch:
      return { action: 'relink', code, reason: 'WhatsApp reported a multi-device mismatch (411)' };
    case DisconnectReason.restartRequired:
      return {
        action: 'reconnect',
        immediate: true,
        code,
        reason: 'restart required (normal after linking)',
      };
    default:
      return {
        action: 'reconnect',
        immediate: false,
        code,
        reason: code === undefined ? message : `${message} (${code})`,
      };
  }
}
