import { isIP } from 'node:net';
import { ColloquyError } from '@colloquy/core';

/** Options of {@link createWebChatPlugin}. */
export interface WebChatPluginOptions {
  /** The interface the HTTP server binds to. Default `'127.0.0.1'` (loopback only). */
  host?: string;
  /** The TCP port. Default `7420`; `0` picks a free port (see `address()`). */
  port?: number;
  /**
   * The secret that signs visitor and owner cookies (HMAC-SHA256), at least 32 characters.
   * Keep it stable across restarts or every visitor gets a new identity. Required.
   */
  cookieSecret: string;
  /**
   * The owner's admin token (the app's gateway token). When set, the owner sees the live session
   * panel after opening the page once with `?admin=<token>` or sending `Authorization: Bearer <token>`.
   * Unset disables the owner panel.
   */
  adminToken?: string;
  /** The longest message a visitor may send, in characters. Default `8000`. */
  maxMessageChars?: number;
  /** The page title and header text. Default `'Colloquy'`. */
  title?: string;
  /** The assistant's display name; `@<name>` (like `@bot`) addresses it in rooms. Default `'Assistant'`. */
  assistantName?: string;
  /** How many messages a reconnecting page is shown. Default `50`. */
  historyLimit?: number;
  /** Message rate limit per visitor: a token bucket. Default `{ burst: 8, perSecond: 1 }`. */
  rateLimit?: { burst: number; perSecond: number };
  /** The account id reported on inbound messages. Default `'default'`. */
  accountId?: string;
  /** Mark cookies `Secure` (set when the page is served over HTTPS by a proxy). Default `false`. */
  secureCookies?: boolean;
  /**
   * Host names the WebSocket may be reached by, checked against the `Host` header so that a page on
   * another domain resolving to this machine (DNS rebinding) cannot open a visitor session. Default:
   * the bound `host` plus `localhost`, `127.0.0.1` and `::1`; bound to every interface (`0.0.0.0`)
   * without a list, any host is accepted (put a proxy with TLS in front and list your domain).
   */
  allowedHosts?: string[];
  /** Open WebSockets in all. Default `2000`. */
  maxSockets?: number;
  /**
   * Open WebSockets per client address, at most half of `maxSockets`, so one address cannot fill the
   * server and lock other visitors out. Default `32`.
   */
  maxSocketsPerAddress?: number;
  /**
   * New visitor identities (cookie-less visits of the page or the socket) per client address per
   * minute, as a token bucket of that size refilling over the minute. Default `30`.
   */
  newVisitorsPerMinute?: number;
  /**
   * Message rate limit per client address, on top of `rateLimit` per visitor, so many cookie-less
   * visitors from one address share one budget. Default `{ burst: 30, perSecond: 3 }`.
   */
  addressRateLimit?: { burst: number; perSecond: number };
  /**
   * Close a socket that has not sent a chat message this many milliseconds after it opened (close
   * code `4408`; the page reconnects when its visitor comes back to it). The owner's sockets are exempt.
   * `0` never closes. Default
   * `300000` (5 minutes).
   */
  idleSocketMs?: number;
  /**
   * Peer addresses of reverse proxies whose `X-Forwarded-For` names the client address for the
   * per-address limits (the right-most entry that is not a trusted proxy). Default `[]`: the header is
   * ignored and the TCP peer is the client. List your proxy (e.g. `['127.0.0.1']`) when the chat is
   * served behind one, or every visitor shares the proxy's address; never list an address that
   * untrusted clients connect from, or they can pick their own address.
   */
  trustedProxies?: string[];
}

/** Options with every default applied. */
export interface ResolvedWebChatOptions {
  host: string;
  port: number;
  cookieSecret: string;
  adminToken: string | undefined;
  maxMessageChars: number;
  title: string;
  assistantName: string;
  historyLimit: number;
  rateLimit: { burst: number; perSecond: number };
  accountId: string;
  secureCookies: boolean;
  allowedHosts: string[] | undefined;
  maxSockets: number;
  maxSocketsPerAddress: number;
  newVisitorsPerMinute: number;
  addressRateLimit: { burst: number; perSecond: number };
  idleSocketMs: number;
  trustedProxies: string[];
}

const MIN_SECRET_CHARS = 32;

/**
 * Applies defaults and checks the options.
 *
 * @param options - the caller's options
 * @returns the resolved options
 * @throws ColloquyError `CONFIG_INVALID` when a value is missing or out of range; the message names the option.
 */
export function resolveWebChatOptions(options: WebChatPluginOptions): ResolvedWebChatOptions {
  const invalid = (path: string, expected: string, got: unknown): never => {
    throw new ColloquyError('CONFIG_INVALID', `Web chat option "${path}" must be ${expected}.`, {
      issues: [{ path: `channels.webchat.${path}`, expected, got: describe(got) }],
    });
  };
  const { cookieSecret } = options;
  if (typeof cookieSecret !== 'string' || cookieSecret.length < MIN_SECRET_CHARS) {
    invalid('cookieSecret', `a random string of at least ${MIN_SECRET_CHARS} characters`, cookieSecret);
  }
  const port = options.port ?? 7420;
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    invalid('port', 'an integer from 0 to 65535', port);
  const maxMessageChars = options.maxMessageChars ?? 8000;
  if (!Number.isInteger(maxMessageChars) || maxMessageChars < 1 || maxMessageChars > 1_000_000) {
    invalid('maxMessageChars', 'an integer from 1 to 1000000', maxMessageChars);
  }
  const historyLimit = options.historyLimit ?? 50;
  if (!Number.isInteger(historyLimit) || historyLimit < 0 || historyLimit > 500) {
    invalid('historyLimit', 'an integer from 0 to 500', historyLimit);
  }
  const rateLimit = options.rateLimit ?? { burst: 8, perSecond: 1 };
  if (!(rateLimit.burst >= 1) || !(rateLimit.perSecond > 0)) {
    invalid('rateLimit', 'burst >= 1 and perSecond > 0', rateLimit);
  }
  const addressRateLimit = options.addressRateLimit ?? { burst: 30, perSecond: 3 };
  if (!(addressRateLimit.burst >= 1) || !(addressRateLimit.perSecond > 0)) {
    invalid('addressRateLimit', 'burst >= 1 and perSecond > 0', addressRateLimit);
  }
  const integer = (path: string, value: number, min: number, max: number): number => {
    if (!Number.isInteger(value) || value < min || value > max) {
      invalid(path, `an integer from ${min} to ${max}`, value);
    }
    return value;
  };
  const maxSockets = integer('maxSockets', options.maxSockets ?? 2000, 2, 1_000_000);
  const maxSocketsPerAddress = integer(
    'maxSocketsPerAddress',
    options.maxSocketsPerAddress ?? Math.min(32, Math.floor(maxSockets / 2)),
    1,
    Math.floor(maxSockets / 2),
  );
  const newVisitorsPerMinute = integer(
    'newVisitorsPerMinute',
    options.newVisitorsPerMinute ?? 30,
    1,
    1_000_000,
  );
  const idleSocketMs = integer('idleSocketMs', options.idleSocketMs ?? 300_000, 0, 86_400_000);
  const trustedProxies = options.trustedProxies ?? [];
  if (!Array.isArray(trustedProxies) || trustedProxies.some((a) => typeof a !== 'string' || isIP(a) === 0)) {
    invalid('trustedProxies', 'a list of IP addresses', trustedProxies);
  }
  if (options.adminToken !== undefined && options.adminToken.length < 8) {
    invalid('adminToken', 'at least 8 characters when set', '(too short)');
  }
  const assistantName = (options.assistantName ?? 'Assistant').trim();
  if (assistantName.length === 0 || assistantName.length > 40) {
    invalid('assistantName', 'a name of 1 to 40 characters', options.assistantName);
  }
  return {
    host: options.host ?? '127.0.0.1',
    port,
    cookieSecret,
    adminToken: options.adminToken,
    maxMessageChars,
    title: options.title ?? 'Colloquy',
    assistantName,
    historyLimit,
    rateLimit,
    accountId: options.accountId ?? 'default',
    secureCookies: options.secureCookies ?? false,
    allowedHosts: options.allowedHosts,
    maxSockets,
    maxSocketsPerAddress,
    newVisitorsPerMinute,
    addressRateLimit,
    idleSocketMs,
    trustedProxies,
  };
}

function describe(value: unknown): string {
  if (typeof value === 'string') return `string of ${value.length} characters`;
  return value === undefined ? 'undefined' : JSON.stringify(value);
}
