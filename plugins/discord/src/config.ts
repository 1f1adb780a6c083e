import { ColloquyError, type ConfigIssue, resolveSection } from '@colloquy/core';
import { type Static, Type } from '@sinclair/typebox';

// --- schema ---

const Snowflake = Type.String({
  pattern: '^[0-9]{1,22}$',
  'x-expected': 'a Discord id as a quoted string of digits',
  description: 'A Discord id (snowflake) written as a string of digits.',
});

const SnowflakeList = Type.Array(Snowflake);

/**
 * One bot account: its id inside Colloquy, its bot token (or the environment variable holding it),
 * and where it connects when Discord is reached through a proxy.
 */
export const DiscordAccountSchema = Type.Object(
  {
    accountId: Type.String({ minLength: 1, default: 'default' }),
    token: Type.Optional(Type.String({ minLength: 1 })),
    tokenEnv: Type.Optional(Type.String({ minLength: 1 })),
    apiRoot: Type.Optional(
      Type.String({
        pattern: '^https?://',
        description: 'REST API root; default https://discord.com/api (set it for a REST proxy).',
      }),
    ),
    gatewayUrl: Type.Optional(
      Type.String({
        pattern: '^wss?://',
        description:
          'Gateway WebSocket URL used instead of the one Discord returns (a gateway proxy). Default: what Discord returns.',
      }),
    ),
  },
  { additionalProperties: false },
);

/** Per-channel gating inside a guild. */
export const DiscordChannelGateSchema = Type.Object(
  {
    requireMention: Type.Optional(Type.Boolean()),
    allowUsers: Type.Optional(SnowflakeList),
  },
  { additionalProperties: false },
);

/** Per-guild gating. */
export const DiscordGuildSchema = Type.Object(
  {
    requireMention: Type.Optional(Type.Boolean()),
    channels: Type.Optional(Type.Record(Type.String(), DiscordChannelGateSchema)),
    allowUsers: Type.Optional(SnowflakeList),
  },
  { additionalProperties: false },
);

/**
 * The `channels.discord` config section (TypeBox, with defaults).
 *
 * - `accounts`: one or more bot accounts (`token` or `tokenEnv`; `apiRoot` and `gatewayUrl` for a proxy).
 * - `requireMentionByDefault` [true]: guild messages must mention (or reply to) the bot.
 * - `guilds`: per-guild and per-channel `requireMention` and `allowUsers`.
 * - `allowGuilds`, `allowChannels`, `allowUsers`: allowlists; unset or empty means everyone.
 * - `threadBindings.idleMinutes` [1440]: a bound thread idle this long is unbound (0 = never).
 */
export const DiscordConfigSchema = Type.Object(
  {
    accounts: Type.Array(DiscordAccountSchema, { minItems: 1 }),
    requireMentionByDefault: Type.Boolean({ default: true }),
    guilds: Type.Record(Type.String(), DiscordGuildSchema, { default: {} }),
    allowGuilds: Type.Optional(SnowflakeList),
    allowChannels: Type.Optional(SnowflakeList),
    allowUsers: Type.Optional(SnowflakeList),
    threadBindings: Type.Object(
      { idleMinutes: Type.Integer({ minimum: 0, default: 1440 }) },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

/** The fully resolved `channels.discord` section. */
export type DiscordConfig = Static<typeof DiscordConfigSchema>;

/** One resolved bot account. */
export type DiscordAccountConfig = Static<typeof DiscordAccountSchema>;

/** Per-guild gating, as resolved. */
export type DiscordGuildConfig = Static<typeof DiscordGuildSchema>;

/** What users write: every field with a default may be left out. */
export interface DiscordConfigInput {
  /**
   * One or more bot accounts: `accountId` (default `default`), `token` or `tokenEnv`, and `apiRoot` /
   * `gatewayUrl` for a proxy.
   */
  accounts: {
    accountId?: string;
    token?: string;
    tokenEnv?: string;
    apiRoot?: string;
    gatewayUrl?: string;
  }[];
  /** Guild messages must mention (or reply to) the bot. Default true. */
  requireMentionByDefault?: boolean;
  /** Per-guild (and per-channel) `requireMention` and `allowUsers`, by guild id. */
  guilds?: Record<string, DiscordGuildConfig>;
  /** Only these guild ids are served; unset or empty means every guild. */
  allowGuilds?: string[];
  /** Only these channel ids are served; unset or empty means every channel. */
  allowChannels?: string[];
  /** Only these user ids are answered; unset or empty means everyone. */
  allowUsers?: string[];
  /** `idleMinutes`: a bound thread idle this long is unbound (default 1440; 0 = never). */
  threadBindings?: { idleMinutes?: number };
}

/**
 * One problem found in the section: a dotted path, what was expected and what was found (for an
 * unknown setting also the settings `allowed` there and a `suggestion`). Core's `ConfigIssue`.
 */
export type DiscordConfigIssue = ConfigIssue;

// --- resolution ---

const SECTION = 'channels.discord';

/**
 * Validates the `channels.discord` section and fills its defaults.
 *
 * @param section - the raw section (parsed JSON5), usually `config.channels.discord`
 * @returns the resolved config; the input is not mutated
 * @throws ColloquyError `CONFIG_INVALID` with `details.issues: { path, expected, got }[]` naming
 *   every bad field (paths start with `channels.discord`)
 * @example
 * ```ts
 * const discord = resolveDiscordConfig({ accounts: [{ tokenEnv: 'DISCORD_TOKEN' }] });
 * discord.threadBindings.idleMinutes; // 1440
 * ```
 */
export function resolveDiscordConfig(section: unknown): DiscordConfig {
  return resolveSection(DiscordConfigSchema, section, {
    path: SECTION,
    label: 'Discord',
    check: checkAccounts,
  });
}

function checkAccounts(config: DiscordConfig): DiscordConfigIssue[] {
  const issues: DiscordConfigIssue[] = [];
  const seen = new Set<string>();
  config.accounts.forEach((account, index) => {
    const path = `${SECTION}.accounts[${index}]`;
    if (account.token === undefined && account.tokenEnv === undefined) {
      issues.push({
        path: `${path}.token`,
        expected: 'a bot token, or tokenEnv naming a variable',
        got: 'nothing',
      });
    }
    if (seen.has(account.accountId)) {
      issues.push({
        path: `${path}.accountId`,
        expected: 'an accountId used by no other account',
        got: JSON.stringify(account.accountId),
      });
    }
    seen.add(account.accountId);
  });
  return issues;
}

/**
 * Returns the bot token of an account, reading `tokenEnv` from the environment when set.
 *
 * @param account - a resolved account
 * @param index - its position in `accounts`, for the error path
 * @param env - the environment (default `process.env`)
 * @throws ColloquyError `CONFIG_INVALID` when `tokenEnv` names an unset variable
 */
export function resolveAccountToken(
  account: DiscordAccountConfig,
  index: number,
  env: Record<string, string | undefined> = process.env,
): string {
  if (account.token !== undefined) return account.token;
  const name = account.tokenEnv ?? '';
  const token = env[name];
  if (token === undefined || token === '') {
    throw new ColloquyError(
      'CONFIG_INVALID',
      `Discord account "${account.accountId}" reads its token from $${name}, which is not set. ` +
        `Export ${name} or set ${SECTION}.accounts[${index}].token.`,
      {
        issues: [{ path: `${SECTION}.accounts[${index}].tokenEnv`, expected: `$${name} set`, got: 'unset' }],
      },
    );
  }
  return token;
}
