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
  };
}

function describe(value: unknown): string {
  if (typeof value === 'string') return `string of ${value.length} characters`;
  return value === undefined ? 'undefined' : JSON.stringify(value);
}
