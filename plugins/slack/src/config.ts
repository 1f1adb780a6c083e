import { ColloquyError, type ConfigIssue, resolveSection } from '@colloquy/core';
import { type Static, Type } from '@sinclair/typebox';

// --- schema ---

const SlackId = Type.String({
  pattern: '^[A-Z0-9]{2,}$',
  'x-expected': 'a Slack id such as U0123ABCD or C0123ABCD',
  description: 'A Slack user or conversation id.',
});

const SlackIdList = Type.Array(SlackId);

/**
 * One Slack app installed in a workspace: its bot token, its app-level token (Socket Mode) or
 * signing secret (HTTP events), each given directly or as the environment variable holding it.
 */
export const SlackAccountSchema = Type.Object(
  {
    accountId: Type.String({ minLength: 1, default: 'default' }),
    botToken: Type.Optional(Type.String({ pattern: '^xoxb-', 'x-expected': 'a bot token (xoxb-…)' })),
    botTokenEnv: Type.Optional(Type.String({ minLength: 1 })),
    appToken: Type.Optional(Type.String({ pattern: '^xapp-', 'x-expected': 'an app-level token (xapp-…)' })),
    appTokenEnv: Type.Optional(Type.String({ minLength: 1 })),
    signingSecret: Type.Optional(Type.String({ minLength: 1 })),
    signingSecretEnv: Type.Optional(Type.String({ minLength: 1 })),
    apiUrl: Type.Optional(
      Type.String({
        pattern: '^https?://.*/$',
        'x-expected': 'a URL ending in /',
        description: 'Web API root; default https://slack.com/api/ (set it for a proxy).',
      }),
    ),
  },
  { additionalProperties: false },
);

/** Per-conversation gating. */
export const SlackChannelGateSchema = Type.Object(
  {
    requireMention: Type.Optional(Type.Boolean()),
    allowUsers: Type.Optional(SlackIdList),
  },
  { additionalProperties: false },
);

/** Where Slack's HTTP events arrive (`mode: 'http'`). */
export const SlackHttpSchema = Type.Object(
  {
    host: Type.String({ minLength: 1, default: '127.0.0.1' }),
    port: Type.Integer({ minimum: 0, maximum: 65_535, default: 3000 }),
    path: Type.String({ pattern: '^/', default: '/slack/events' }),
  },
  { additionalProperties: false, default: {} },
);

/**
 * The `channels.slack` config section (TypeBox, with defaults).
 *
 * - `accounts`: one or more Slack apps (`botToken`/`botTokenEnv`, and `appToken`/`appTokenEnv` for
 *   Socket Mode or `signingSecret`/`signingSecretEnv` for HTTP events; `apiUrl` for a proxy).
 * - `mode` [`socket`]: Socket Mode (an outbound WebSocket, no public URL) or `http` (Slack posts
 *   events to `http.host:http.port` + `http.path`; one account per process).
 * - `requireMentionByDefault` [true]: channel messages must mention the bot.
 * - `channels`: per-conversation `requireMention` and `allowUsers`, by conversation id.
 * - `allowChannels`, `allowUsers`: allowlists; unset or empty means everyone.
 */
export const SlackConfigSchema = Type.Object(
  {
    accounts: Type.Array(SlackAccountSchema, { minItems: 1 }),
    mode: Type.Union([Type.Literal('socket'), Type.Literal('http')], { default: 'socket' }),
    http: SlackHttpSchema,
    requireMentionByDefault: Type.Boolean({ default: true }),
    channels: Type.Record(Type.String(), SlackChannelGateSchema, { default: {} }),
    allowChannels: Type.Optional(SlackIdList),
    allowUsers: Type.Optional(SlackIdList),
  },
  { additionalProperties: false },
);

/** The fully resolved `channels.slack` section. */
export type SlackConfig = Static<typeof SlackConfigSchema>;

/** One resolved Slack app account. */
export type SlackAccountConfig = Static<typeof SlackAccountSchema>;

/** Per-conversation gating, as resolved. */
export type SlackChannelConfig = Static<typeof SlackChannelGateSchema>;

/** What users write: every field with a default may be left out. */
export interface SlackConfigInput {
  /**
   * One or more Slack apps: `accountId` (default `default`), `botToken` or `botTokenEnv`, `appToken`
   * or `appTokenEnv` (Socket Mode), `signingSecret` or `signingSecretEnv` (HTTP), and `apiUrl`.
   */
  accounts: {
    accountId?: string;
    botToken?: string;
    botTokenEnv?: string;
    appToken?: string;
    appTokenEnv?: string;
    signingSecret?: string;
    signingSecretEnv?: string;
    apiUrl?: string;
  }[];
  /** `socket` (default): Socket Mode. `http`: Slack posts events to `http`. */
  mode?: 'socket' | 'http';
  /** Where HTTP events are served: `host` (127.0.0.1), `port` (3000), `path` (`/slack/events`). */
  http?: { host?: string; port?: number; path?: string };
  /** Channel messages must mention the bot. Default true. */
  requireMentionByDefault?: boolean;
  /** Per-conversation `requireMention` and `allowUsers`, by conversation id (`C…`, `G…`). */
  channels?: Record<string, SlackChannelConfig>;
  /** Only these conversation ids are served; unset or empty means every conversation. */
  allowChannels?: string[];
  /** Only these user ids are answered; unset or empty means everyone. */
  allowUsers?: string[];
}

// --- resolution ---

const SECTION = 'channels.slack';

/**
 * Validates the `channels.slack` section and fills its defaults.
 *
 * @param section - the raw section (parsed JSON5), usually `config.channels.slack`
 * @returns the resolved config; the input is not mutated
 * @throws ColloquyError `CONFIG_INVALID` with `details.issues: { path, expected, got }[]` naming
 *   every bad field (paths start with `channels.slack`)
 * @example
 * ```ts
 * const slack = resolveSlackConfig({
 *   accounts: [{ botTokenEnv: 'SLACK_BOT_TOKEN', appTokenEnv: 'SLACK_APP_TOKEN' }],
 * });
 * slack.mode; // 'socket'
 * ```
 */
export function resolveSlackConfig(section: unknown): SlackConfig {
  return resolveSection(SlackConfigSchema, section, { path: SECTION, label: 'Slack', check: checkAccounts });
}

function checkAccounts(config: SlackConfig): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const seen = new Set<string>();
  const missing = (path: string, expected: string): void => {
    issues.push({ path, expected, got: 'nothing' });
  };
  config.accounts.forEach((account, index) => {
    const path = `${SECTION}.accounts[${index}]`;
    if (account.botToken === undefined && account.botTokenEnv === undefined) {
      missing(`${path}.botToken`, 'a bot token (xoxb-…), or botTokenEnv naming a variable');
    }
    if (config.mode === 'socket' && account.appToken === undefined && account.appTokenEnv === undefined) {
      missing(`${path}.appToken`, 'an app-level token (xapp-…) for Socket Mode, or appTokenEnv');
    }
    if (
      config.mode === 'http' &&
      account.signingSecret === undefined &&
      account.signingSecretEnv === undefined
    ) {
      missing(`${path}.signingSecret`, 'the signing secret for HTTP events, or signingSecretEnv');
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
  if (config.mode === 'http' && config.accounts.length > 1) {
    issues.push({
      path: `${SECTION}.accounts`,
      expected: 'one account with mode "http" (one events URL per process); use mode "socket" for several',
      got: `${config.accounts.length} accounts`,
    });
  }
  return issues;
}

/** The secrets one account runs with, read from the config or the environment. */
export interface SlackAccountSecrets {
  /** The bot token (`xoxb-…`). */
  botToken: string;
  /** The app-level token (`xapp-…`), in Socket Mode. */
  appToken?: string;
  /** The signing secret, for HTTP events. */
  signingSecret?: string;
}

/**
 * Reads an account's secrets, taking the `…Env` settings from the environment.
 *
 * @param config - the resolved section (its `mode` says which secrets are needed)
 * @param index - the account's position in `accounts`
 * @param env - the environment (default `process.env`)
 * @throws ColloquyError `CONFIG_INVALID` when an `…Env` setting names an unset variable
 */
export function resolveAccountSecrets(
  config: SlackConfig,
  index: number,
  env: Record<string, string | undefined> = process.env,
): SlackAccountSecrets {
  const account = config.accounts[index]!;
  const read = (value: string | undefined, variable: string | undefined, field: string): string => {
    if (value !== undefined) return value;
    const name = variable ?? '';
    const found = env[name];
    if (found === undefined || found === '') {
      throw new ColloquyError(
        'CONFIG_INVALID',
        `Slack account "${account.accountId}" reads its ${field} from $${name}, which is not set. ` +
          `Export ${name} or set ${SECTION}.accounts[${index}].${field}.`,
        {
          issues: [
            { path: `${SECTION}.accounts[${index}].${field}Env`, expected: `$${name} set`, got: 'unset' },
          ],
        },
      );
    }
    return found;
  };
  const botToken = read(account.botToken, account.botTokenEnv, 'botToken');
  if (config.mode === 'socket') {
    return { botToken, appToken: read(account.appToken, account.appTokenEnv, 'appToken') };
  }
  return { botToken, signingSecret: read(account.signingSecret, account.signingSecretEnv, 'signingSecret') };
}
