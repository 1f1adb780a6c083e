import { createRateLimiter } from './token-bucket.js';

/** The limits one client address is held to (see the plugin options of the same names). */
export interface AddressLimitOptions {
  maxSockets: number;
  maxSocketsPerAddress: number;
  newVisitorsPerMinute: number;
  addressRateLimit: { burst: number; perSecond: number };
}

/** Why a new socket is refused: the HTTP status and a sentence for the client. */
export interface Refusal {
  status: 429 | 503;
  message: string;
}

/**
 * Limits per client address, on top of the per-visitor ones, so that one client minting visitor
 * identities (by dropping its cookie) cannot fill the server or dodge the message rate limit: new
 * identities per minute, open sockets, and messages (a token bucket) per address; and the global
 * socket cap, which one address can fill at most `maxSocketsPerAddress` of.
 */
export interface AddressLimits {
  /** Takes one new-visitor token for `address`; a refusal when its budget for the minute is spent. */
  newVisitor(address: string): Refusal | undefined;
  /** Whether one more socket may open for `address` (call `opened` when it does). */
  canOpen(address: string): Refusal | undefined;
  opened(address: string): void;
  closed(address: string): void;
  /** Takes one message token for `address`; false when the address sends too fast. */
  message(address: string): boolean;
  /** Open sockets of `address` (for tests and logs). */
  socketsOf(address: string): number;
}

/**
 * Creates the per-address limits.
 *
 * @param options - the resolved limits
 * @returns the limits
 */
export function createAddressLimits(options: AddressLimitOptions): AddressLimits {
  const sockets = new Map<string, number>();
  let total = 0;
  const identities = createRateLimiter({
    burst: options.newVisitorsPerMinute,
    perSecond: options.newVisitorsPerMinute / 60,
  });
  const messages = createRateLimiter(options.addressRateLimit);
  return {
    newVisitor(address) {
      if (identities.take(address)) return undefined;
      return {
        status: 429,
        message: `Too many new visitors from your address (more than ${options.newVisitorsPerMinute} a minute); keep your cookie, or try again in a minute.`,
      };
    },
    canOpen(address) {
      if ((sockets.get(address) ?? 0) >= options.maxSocketsPerAddress) {
        return {
          status: 429,
          message: `Too many open chats from your address (at most ${options.maxSocketsPerAddress}); close a tab and try again.`,
        };
      }
      if (total >= options.maxSockets) {
        return { status: 503, message: 'The chat is full right now; try again in a minute.' };
      }
      return undefined;
    },
    opened(address) {
      total++;
      sockets.set(address, (sockets.get(address) ?? 0) + 1);
    },
    closed(address) {
      total = Math.max(0, total - 1);
      const left = (sockets.get(address) ?? 1) - 1;
      if (left > 0) sockets.set(address, left);
      else sockets.delete(address);
    },
    message: (address) => messages.take(address),
    socketsOf: (address) => sockets.get(address) ?? 0,
  };
}
