import { isIP } from 'node:net';
import { type ConfigIssue, resolveSection } from '@colloquy/core';
import { type Static, Type } from '@sinclair/typebox';

const Strict = { additionalProperties: false } as const;

/** A token bucket: `burst` actions at once, refilled at `perSecond`. */
const TokenBucketSchema = Type.Object(
  { burst: Type.Integer({ minimum: 1 }), perSecond: Type.Number({ exclusiveMinimum: 0 }) },
  Strict,
);

/**
 * TypeBox schema of the `channels.webchat` config section, with defaults: where the chat listens,
 * how it looks and its limits. The cookie secret and the owner's token are not config: they are
 * options of `createWebChatPlugin` (the reference app keeps them in its state directory).
 */
export const WebChatConfigSchema = Type.Object(
  {
    /** Run the web chat. Default `true`. */
    enabled: Type.Boolean({ default: true }),
    /** The interface the HTTP server binds to. Default `'127.0.0.1'` (loopback only). */
    host: Type.String({ minLength: 1, default: '127.0.0.1' }),
    /** The TCP port. Default `7420`; `0` picks a free port (see `address()`). */
    port: Type.Integer({ minimum: 0, maximum: 65_535, default: 7420 }),
    /** The page title and header text. Default `'Colloquy'`. */
    title: Type.String({ minLength: 1, maxLength: 80, default: 'Colloquy' }),
    /** The assistant's display name; `@<name>` (like `@bot`) addresses it in rooms. Default `'Assistant'`. */
    assistantName: Type.String({
      pattern: '\\S',
      maxLength: 40,
      default: 'Assistant',
      'x-expected': 'a name of 1 to 40 characters',
    }),
    /** The longest message a visitor may send, in characters. Default `8000`. */
    maxMessageChars: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 8000 }),
    /** How many messages a reconnecting page is shown. Default `50`. */
    historyLimit: Type.Integer({ minimum: 0, maximum: 500, default: 50 }),
    /** Message rate limit per visitor: a token bucket. Default `{ burst: 8, perSecond: 1 }`. */
    rateLimit: Type.Object(TokenBucketSchema.properties, { ...Strict, default: { burst: 8, perSecond: 1 } }),
    /** Mark cookies `Secure` (set when the page is served over HTTPS by a proxy). Default `false`. */
    secureCookies: Type.Boolean({ default: false }),
    /**
     * Host names the WebSocket may be reached by, checked against the `Host` header so that a page on
     * another domain resolving to this machine (DNS rebinding) cannot open a visitor session. Default:
     * the bound `host` plus `localhost`, `127.0.0.1` and `::1`; bound to every interface (`0.0.0.0`)
     * without a list, any host is accepted (put a proxy with TLS in front and list your domain).
     */
    allowedHosts: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
    /** Open WebSockets in all. Default `2000`. */
    maxSockets: Type.Integer({ minimum: 2, maximum: 1_000_000, default: 2000 }),
    /**
     * Open WebSockets per client address, at most half of `maxSockets`, so one address cannot fill the
     * server and lock other visitors out. Default `32` (or half of `maxSockets` when that is less).
     */
    maxSocketsPerAddress: Type.Optional(Type.Integer({ minimum: 1 })),
    /**
     * New visitor identities (cookie-less visits of the page or the socket) per client address per
     * minute, as a token bucket of that size refilling over the minute. Default `30`.
     */
    newVisitorsPerMinute: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 30 }),
    /**
     * Message rate limit per client address, on top of `rateLimit` per visitor, so many cookie-less
     * visitors from one address share one budget. Default `{ burst: 30, perSecond: 3 }`.
     */
    addressRateLimit: Type.Object(TokenBucketSchema.properties, {
      ...Strict,
      default: { burst: 30, perSecond: 3 },
    }),
    /**
     * Close a socket that has not sent a chat message this many milliseconds after it opened (close
     * code `4408`; the page reconnects when its visitor comes back to it). The owner's sockets are
     * exempt. `0` never closes. Default `300000` (5 minutes).
     */
    idleSocketMs: Type.Integer({ minimum: 0, maximum: 86_400_000, default: 300_000 }),
    /**
     * Peer addresses of reverse proxies whose `X-Forwarded-For` names the client address for the
     * per-address limits (the right-most entry that is not a trusted proxy). Default `[]`: the header is
     * ignored and the TCP peer is the client. List your proxy (e.g. `['127.0.0.1']`) when the chat is
     * served behind one, or every visitor shares the proxy's address; never list an address that
     * untrusted clients connect from, or they can pick their own address.
     */
    trustedProxies: Type.Array(Type.String({ minLength: 1 }), { default: [] }),
  },
  { ...Strict, default: {} },
);

/** The resolved `channels.webchat` section: every default applied. */
export type WebChatConfig = Static<typeof WebChatConfigSchema>;

/** The `channels.webchat` section as written by users: everything with a default may be left out. */
export type WebChatConfigInput = Partial<WebChatConfig>;

const SECTION = 'channels.webchat';

/**
 * Validates the `channels.webchat` section and applies its defaults.
 *
 * Beyond the schema it checks that `maxSocketsPerAddress` is at most half of `maxSockets` and that
 * `trustedProxies` are IP addresses.
 *
 * @param section - the raw `channels.webchat` value (`undefined` gives the defaults)
 * @returns the resolved config
 * @throws ColloquyError `CONFIG_INVALID` with `details.issues: { path, expected, got }[]`
 * @example
 * ```ts
 * const config = resolveWebChatConfig({ port: 8080 });
 * config.host; // '127.0.0.1'
 * ```
 */
export function resolveWebChatConfig(section: unknown): WebChatConfig {
  return resolveSection(WebChatConfigSchema, section, {
    path: SECTION,
    label: 'web chat',
    check: crossFieldIssues,
  });
}

function crossFieldIssues(config: WebChatConfig): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const half = Math.floor(config.maxSockets / 2);
  if (config.maxSocketsPerAddress !== undefined && config.maxSocketsPerAddress > half) {
    issues.push({
      path: `${SECTION}.maxSocketsPerAddress`,
      expected: `integer 1..${half} (at most half of maxSockets)`,
      got: String(config.maxSocketsPerAddress),
    });
  }
  config.trustedProxies.forEach((address, index) => {
    if (isIP(address) === 0) {
      issues.push({
        path: `${SECTION}.trustedProxies[${index}]`,
        expected: 'an IP address',
        got: JSON.stringify(address),
      });
    }
  });
  return issues;
}
