import { sectionError } from '@colloquy/core';
import { resolveWebChatConfig, type WebChatConfigInput } from './config.js';

/** Options of {@link createWebChatPlugin}: the `channels.webchat` section plus the secrets. */
export interface WebChatPluginOptions {
  /** The `channels.webchat` config section; validated by `resolveWebChatConfig`. Default: all defaults. */
  config?: WebChatConfigInput;
  /**
   * The secret that signs visitor and owner cookies (HMAC-SHA256), at least 32 characters.
   * Keep it stable across restarts or every visitor gets a new identity. Required.
   */
  cookieSecret: string;
  /**
   * The owner's admin token (the app's gateway token), at least 8 characters. When set, the owner sees
   * the live session panel after opening the page once with `?admin=<token>` or sending
   * `Authorization: Bearer <token>`. Unset disables the owner panel.
   */
  adminToken?: string;
  /** The account id reported on inbound messages. Default `'default'`. */
  accountId?: string;
  /**
   * What is wrong with the instance this web chat runs in, one sentence each, for `GET /healthz`: it
   * answers 200 `ok` while the list is empty, else 503 with the sentences (the reference app names a
   * database it has not reached for a while). Called on each request. Default: nothing is wrong.
   */
  health?: () => readonly string[];
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
  health: () => readonly string[];
}

const MIN_SECRET_CHARS = 32;
const MIN_ADMIN_TOKEN_CHARS = 8;

/**
 * Resolves the config section and checks the secrets.
 *
 * @param options - the caller's options
 * @returns the resolved options
 * @throws ColloquyError `CONFIG_INVALID` when a setting or secret is missing or out of range; the
 *   issues name each one (`channels.webchat.port`, `channels.webchat.cookieSecret`)
 */
export function resolveWebChatOptions(options: WebChatPluginOptions): ResolvedWebChatOptions {
  const { enabled: _enabled, ...config } = resolveWebChatConfig(options.config);
  const { cookieSecret, adminToken } = options;
  if (typeof cookieSecret !== 'string' || cookieSecret.length < MIN_SECRET_CHARS) {
    throw secretError(
      'cookieSecret',
      `a random string of at least ${MIN_SECRET_CHARS} characters`,
      cookieSecret,
    );
  }
  if (adminToken !== undefined && adminToken.length < MIN_ADMIN_TOKEN_CHARS) {
    throw secretError('adminToken', `at least ${MIN_ADMIN_TOKEN_CHARS} characters when set`, adminToken);
  }
  return {
    ...config,
    cookieSecret,
    adminToken,
    accountId: options.accountId ?? 'default',
    health: options.health ?? (() => []),
    assistantName: config.assistantName.trim(),
    allowedHosts: config.allowedHosts,
    maxSocketsPerAddress: config.maxSocketsPerAddress ?? Math.min(32, Math.floor(config.maxSockets / 2)),
  };
}

function secretError(name: string, expected: string, value: unknown) {
  const got = typeof value === 'string' ? `a string of ${value.length} characters` : 'nothing';
  return sectionError([{ path: `channels.webchat.${name}`, expected, got }], {
    path: 'channels.webchat',
    label: 'web chat',
  });
}
