/**
 * The environment fills the config only where the config file is silent. Each filled setting is
 * reported, so `colloquy config check` and the start banner can say where a value came from.
 */

/** The environment variables the app reads. */
export const ENV = {
  model: 'COLLOQUY_MODEL',
  openaiBaseUrl: 'OPENAI_BASE_URL',
  openaiApiKey: 'OPENAI_API_KEY',
  anthropicApiKey: 'ANTHROPIC_API_KEY',
  telegramToken: 'TELEGRAM_BOT_TOKEN',
  discordToken: 'DISCORD_BOT_TOKEN',
  slackBotToken: 'SLACK_BOT_TOKEN',
  slackAppToken: 'SLACK_APP_TOKEN',
  whatsapp: 'COLLOQUY_WHATSAPP',
  token: 'COLLOQUY_TOKEN',
  stateDir: 'COLLOQUY_STATE_DIR',
  config: 'COLLOQUY_CONFIG',
  logLevel: 'COLLOQUY_LOG_LEVEL',
  logFormat: 'COLLOQUY_LOG_FORMAT',
  gatewayUrl: 'COLLOQUY_GATEWAY_URL',
  databaseUrl: 'COLLOQUY_DATABASE_URL',
  gatewayPort: 'COLLOQUY_GATEWAY_PORT',
  webchatPort: 'COLLOQUY_WEBCHAT_PORT',
} as const;

/** The OpenAI API root used when only `OPENAI_API_KEY` is set. */
export const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';

/** An environment: variable name to value. */
export type Env = Readonly<Record<string, string | undefined>>;

/** The config input after the environment filled its gaps, and what it filled. */
export interface EnvOverlay {
  /** A copy of the input with the gaps filled (the input is not modified). */
  input: Record<string, unknown>;
  /** One line per filled setting, e.g. `agents.defaults.model from COLLOQUY_MODEL`. */
  applied: string[];
}

/**
 * Fills config gaps from the environment: the default model (`COLLOQUY_MODEL`), its provider
 * (`OPENAI_BASE_URL`/`OPENAI_API_KEY`, or `ANTHROPIC_API_KEY` for `anthropic/...`), channel
 * accounts (`TELEGRAM_BOT_TOKEN`, `DISCORD_BOT_TOKEN`, `SLACK_BOT_TOKEN` with `SLACK_APP_TOKEN`),
 * WhatsApp (`COLLOQUY_WHATSAPP=1`), the gateway token (`COLLOQUY_TOKEN`), the ports (`COLLOQUY_GATEWAY_PORT`, `COLLOQUY_WEBCHAT_PORT`), the database
 * (`COLLOQUY_DATABASE_URL`) and the log level (`COLLOQUY_LOG_LEVEL`). A setting present in the config
 * always wins.
 *
 * @param input - the parsed config file (an object), or `{}`
 * @param env - the environment (default `process.env`)
 * @returns the filled copy and the list of filled settings
 */
export function applyEnvironment(input: Record<string, unknown>, env: Env = process.env): EnvOverlay {
  const config = structuredClone(input);
  const applied: string[] = [];
  const value = (name: string): string | undefined => {
    const v = env[name]?.trim();
    return v ? v : undefined;
  };

  const agents = objectAt(config, 'agents');
  const defaults = objectAt(agents, 'defaults');
  const envModel = value(ENV.model);
  if (defaults.model === undefined && envModel !== undefined) {
    defaults.model = envModel;
    applied.push(`agents.defaults.model from ${ENV.model}`);
  }
  const providerIds = new Set<string>();
  if (typeof defaults.model === 'string') providerIds.add(providerOf(defaults.model));
  if (Array.isArray(agents.list)) {
    for (const agent of agents.list) {
      if (isRecord(agent) && typeof agent.model === 'string') providerIds.add(providerOf(agent.model));
    }
  }
  const models = objectAt(config, 'models');
  const providers = objectAt(models, 'providers');
  for (const id of providerIds) {
    if (id === '' || providers[id] !== undefined) continue;
    if (id === 'anthropic' && value(ENV.anthropicApiKey)) {
      providers[id] = { kind: 'anthropic' };
      applied.push(`models.providers.anthropic from ${ENV.anthropicApiKey}`);
      continue;
    }
    const baseURL = value(ENV.openaiBaseUrl);
    const apiKey = value(ENV.openaiApiKey);
    if (baseURL === undefined && apiKey === undefined) continue;
    providers[id] = {
      kind: 'openai-compatible',
      baseURL: baseURL ?? OPENAI_DEFAULT_BASE_URL,
      ...(apiKey ? { apiKeyEnv: ENV.openaiApiKey } : {}),
    };
    applied.push(
      `models.providers.${id} from ${[baseURL && ENV.openaiBaseUrl, apiKey && ENV.openaiApiKey].filter(Boolean).join(' and ')}`,
    );
  }
  pruneEmpty(models, 'providers');
  pruneEmpty(config, 'models');
  pruneEmpty(agents, 'defaults');
  pruneEmpty(config, 'agents');

  const gateway = objectAt(config, 'gateway');
  const token = value(ENV.token);
  if (gateway.token === undefined && token !== undefined) {
    gateway.token = token;
    applied.push(`gateway.token from ${ENV.token}`);
  }
  const gatewayPort = value(ENV.gatewayPort);
  if (gateway.port === undefined && gatewayPort !== undefined) {
    gateway.port = portValue(gatewayPort);
    applied.push(`gateway.port from ${ENV.gatewayPort}`);
  }
  pruneEmpty(config, 'gateway');

  const channels = objectAt(config, 'channels');
  const telegramToken = value(ENV.telegramToken);
  if (telegramToken !== undefined && fillAccounts(channels, 'telegram', [{ token: telegramToken }])) {
    applied.push(`channels.telegram.accounts from ${ENV.telegramToken}`);
  }
  if (value(ENV.discordToken) !== undefined) {
    if (fillAccounts(channels, 'discord', [{ tokenEnv: ENV.discordToken }])) {
      applied.push(`channels.discord.accounts from ${ENV.discordToken}`);
    }
  }
  if (value(ENV.slackBotToken) !== undefined && value(ENV.slackAppToken) !== undefined) {
    const account = { botTokenEnv: ENV.slackBotToken, appTokenEnv: ENV.slackAppToken };
    if (fillAccounts(channels, 'slack', [account])) {
      applied.push(`channels.slack.accounts from ${ENV.slackBotToken} and ${ENV.slackAppToken}`);
    }
  }
  if (isTruthy(value(ENV.whatsapp)) && channels.whatsapp === undefined) {
    channels.whatsapp = {};
    applied.push(`channels.whatsapp from ${ENV.whatsapp}`);
  }
  const webchatPort = value(ENV.webchatPort);
  const webchat = objectAt(channels, 'webchat');
  if (webchat.port === undefined && webchatPort !== undefined) {
    webchat.port = portValue(webchatPort);
    applied.push(`channels.webchat.port from ${ENV.webchatPort}`);
  }
  pruneEmpty(channels, 'webchat');
  pruneEmpty(config, 'channels');

  const storage = objectAt(config, 'storage');
  const databaseUrl = value(ENV.databaseUrl);
  if (storage.url === undefined && databaseUrl !== undefined) {
    storage.url = databaseUrl;
    applied.push(`storage.url from ${ENV.databaseUrl}`);
  }
  pruneEmpty(config, 'storage');

  const app = objectAt(config, 'app');
  const logLevel = value(ENV.logLevel);
  if (app.logLevel === undefined && logLevel !== undefined) {
    app.logLevel = logLevel;
    applied.push(`app.logLevel from ${ENV.logLevel}`);
  }
  pruneEmpty(config, 'app');
  return { input: config, applied };
}

/**
 * The values of secret environment variables in use, to add to the redaction list (so they never
 * reach history output even when the config names them only by variable).
 *
 * @param env - the environment
 * @returns the secret values of at least 6 characters
 */
export function environmentSecrets(env: Env = process.env): string[] {
  return [
    ENV.openaiApiKey,
    ENV.anthropicApiKey,
    ENV.telegramToken,
    ENV.discordToken,
    ENV.slackBotToken,
    ENV.slackAppToken,
    ENV.token,
  ]
    .map((name) => env[name]?.trim() ?? '')
    .filter((v) => v.length >= 6);
}

function fillAccounts(channels: Record<string, unknown>, id: string, accounts: unknown[]): boolean {
  const section = channels[id];
  if (section === undefined) {
    channels[id] = { accounts };
    return true;
  }
  if (isRecord(section) && (section.accounts === undefined || isEmptyArray(section.accounts))) {
    section.accounts = accounts;
    return true;
  }
  return false;
}

function providerOf(modelRef: string): string {
  const slash = modelRef.indexOf('/');
  return slash > 0 ? modelRef.slice(0, slash) : '';
}

/** A port as a number when it is written as one; anything else is kept, so validation names it. */
function portValue(v: string): number | string {
  return /^\d{1,5}$/.test(v) ? Number(v) : v;
}

function isTruthy(v: string | undefined): boolean {
  return v !== undefined && /^(1|true|yes|on)$/i.test(v);
}

function isEmptyArray(v: unknown): boolean {
  return Array.isArray(v) && v.length === 0;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The object at `parent[key]`, created when absent. A non-object value is left alone (validation reports it). */
function objectAt(parent: Record<string, unknown>, key: string): Record<string, unknown> {
  const existing = parent[key];
  if (isRecord(existing)) return existing;
  const created: Record<string, unknown> = {};
  if (existing === undefined) parent[key] = created;
  return created;
}

/** Removes `parent[key]` again when it is an empty object this module created. */
function pruneEmpty(parent: Record<string, unknown>, key: string): void {
  const v = parent[key];
  if (isRecord(v) && Object.keys(v).length === 0) delete parent[key];
}
