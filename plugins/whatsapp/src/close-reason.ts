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
