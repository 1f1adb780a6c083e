import { type ConfigIssue, resolveSection } from '@colloquy/core';
import { type Static, Type } from '@sinclair/typebox';

/** Where the `channels.telegram` section lives in the app config; issue paths start with it. */
const SECTION_PATH = 'channels.telegram';

const WebhookSchema = Type.Object(
  {
    path: Type.String({
      pattern: '^/[^\\s?#]*$',
      description: 'The path on the app HTTP server that receives updates, e.g. `/telegram/main`.',
    }),
    secretToken: Type.String({
      pattern: '^[A-Za-z0-9_-]{16,256}$',
      description:
        'Checked against the `X-Telegram-Bot-Api-Secret-Token` header; 16-256 characters of A-Z, a-z, 0-9, _ and -.',
    }),
    url: Type.Optional(
      Type.String({
        pattern: '^https://',
        description:
          'The public https URL Telegram posts to. When set, start() registers it with setWebhook.',
      }),
    ),
  },
  { additionalProperties: false },
);

const AccountSchema = Type.Object(
  {
    accountId: Type.String({
      default: 'default',
      pattern: '^[A-Za-z0-9_-]{1,64}$',
      description: 'Names this bot within Colloquy (delivery contexts, session keys with per-account scope).',
    }),
    token: Type.String({
      pattern: '^[0-9]+:[A-Za-z0-9_-]+$',
      description: 'The bot token from @BotFather, `<digits>:<secret>`.',
    }),
    apiRoot: Type.Optional(
      Type.String({
        pattern: '^https?://',
        description: 'Bot API root; default https://api.telegram.org (set it for a local Bot API server).',
      }),
    ),
    mode: Type.Union([Type.Literal('polling'), Type.Literal('webhook')], { default: 'polling' }),
    webhook: Type.Optional(WebhookSchema),
  },
  { additionalProperties: false },
);

const GroupSchema = Type.Object(
  {
    requireMention: Type.Optional(
      Type.Boolean({ description: 'Answer only when addressed; default `requireMentionByDefault`.' }),
    ),
  },
  { additionalProperties: false },
);

/**
 * TypeBox schema of the `channels.telegram` config section, with defaults.
 *
 * Use it to document or validate the section; {@link resolveTelegramConfig} applies the defaults
 * and the cross-field checks the schema cannot express.
 */
export const TelegramConfigSchema = Type.Object(
  {
    accounts: Type.Array(AccountSchema, { default: [] }),
    dmPolicy: Type.Union([Type.Literal('open'), Type.Literal('allowlist'), Type.Literal('pairing')], {
      default: 'pairing',
      description:
        '`open`: anyone may DM the bot. `allowlist`: only `allowFrom`. `pairing`: unknown users get a code the owner approves.',
    }),
    allowFrom: Type.Array(Type.String({ pattern: '^(-?[0-9]+|@?[A-Za-z0-9_]{3,64})$' }), {
      default: [],
      description: 'User ids or @usernames that may DM the bot (with `allowlist` and `pairing`).',
    }),
    groupPolicy: Type.Union([Type.Literal('open'), Type.Literal('allowlist')], {
      default: 'open',
      description: '`allowlist`: only groups listed in `groups` are served; others are ignored.',
    }),
    groups: Type.Record(Type.String({ pattern: '^-?[0-9]+$' }), GroupSchema, {
      default: {},
      description:
        'Per-group settings keyed by chat id, e.g. `"-1001234567890": { "requireMention": false }`.',
    }),
    requireMentionByDefault: Type.Boolean({
      default: true,
      description: 'In groups and channels, answer only when mentioned, replied to, or given a command.',
    }),
  },
  { additionalProperties: false },
);

/** The resolved `channels.telegram` section: every default applied. */
export type TelegramConfig = Static<typeof TelegramConfigSchema>;

/** One resolved bot account. */
export type TelegramAccountConfig = TelegramConfig['accounts'][number];

/**
 * One config problem: where, what was expected, what was found (for an unknown setting also the
 * settings `allowed` there and a `suggestion`). Core's `ConfigIssue`.
 */
export type TelegramConfigIssue = ConfigIssue;

/**
 * Validates the `channels.telegram` section and applies its defaults.
 *
 * Beyond the schema it checks that account ids and tokens are unique and that webhook accounts
 * carry `webhook.path` and `webhook.secretToken` on distinct paths.
 *
 * @param section - the raw `channels.telegram` value (`undefined` gives the defaults)
 * @returns the resolved config
 * @throws ColloquyError `CONFIG_INVALID` with `details.issues: { path, expected, got }[]` (core's
 *   `resolveSection`)
 * @example
 * ```ts
 * const config = resolveTelegramConfig({ accounts: [{ token: process.env.TELEGRAM_TOKEN }] });
 * config.accounts[0]?.accountId; // 'default'
 * ```
 */
export function resolveTelegramConfig(section: unknown): TelegramConfig {
  return resolveSection(TelegramConfigSchema, section, {
    path: SECTION_PATH,
    label: 'Telegram',
    check: crossFieldIssues,
  });
}

function crossFieldIssues(config: TelegramConfig): TelegramConfigIssue[] {
  const issues: TelegramConfigIssue[] = [];
  const ids = new Set<string>();
  const tokens = new Set<string>();
  const paths = new Set<string>();
  config.accounts.forEach((account, index) => {
    const at = `${SECTION_PATH}.accounts[${index}]`;
    if (ids.has(account.accountId)) {
      issues.push({ path: `${at}.accountId`, expected: 'an accountId used once', got: account.accountId });
    }
    ids.add(account.accountId);
    if (tokens.has(account.token)) {
      issues.push({
        path: `${at}.token`,
        expected: 'a token used by one account only (one poller per token)',
        got: 'a duplicate token',
      });
    }
    tokens.add(account.token);
    if (account.mode === 'webhook') {
      if (account.webhook === undefined) {
        issues.push({
          path: `${at}.webhook`,
          expected: 'webhook: { path, secretToken } when mode is "webhook"',
          got: 'nothing',
        });
      } else if (paths.has(account.webhook.path)) {
        issues.push({ path: `${at}.webhook.path`, expected: 'a path used once', got: account.webhook.path });
      } else {
        paths.add(account.webhook.path);
      }
    }
  });
  return issues;
}

/** The `channels.telegram` section as written by users: everything with a default may be left out. */
export interface TelegramConfigInput {
  /**
   * Bot accounts: `accountId` (default `default`), `token`, `apiRoot`, and `mode` (`polling` or `webhook`
   * with `webhook: { path, secretToken, url? }`). Default none.
   */
  accounts?: {
    accountId?: string;
    token: string;
    apiRoot?: string;
    mode?: 'polling' | 'webhook';
    webhook?: { path: string; secretToken: string; url?: string };
  }[];
  /**
   * Who may DM the bot: `open` (anyone), `allowlist` (only `allowFrom`) or `pairing` (a code the owner
   * approves). Default `pairing`.
   */
  dmPolicy?: 'open' | 'allowlist' | 'pairing';
  /** User ids or `@usernames` that may DM the bot (with `allowlist` and `pairing`). Default none. */
  allowFrom?: string[];
  /** `allowlist`: only groups listed in `groups` are served. Default `open`. */
  groupPolicy?: 'open' | 'allowlist';
  /** Per-group settings keyed by chat id, e.g. `"-1001234567890": { "requireMention": false }`. */
  groups?: Record<string, { requireMention?: boolean }>;
  /** In groups and channels, answer only when mentioned, replied to, or given a command. Default true. */
  requireMentionByDefault?: boolean;
}
