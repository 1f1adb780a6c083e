import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { type ColloquyConfig, type ConfigIssue, checkConfig, isColloquyError } from '@colloquy/core';
import { checkSection, describeConfigValue } from '@colloquy/core/internal';
import type { DiscordConfig } from '@colloquy/plugin-discord';
import type { SlackConfig } from '@colloquy/plugin-slack';
import type { TelegramConfig } from '@colloquy/plugin-telegram';
import { resolveWebChatConfig } from '@colloquy/plugin-webchat';
import type { WhatsAppConfig } from '@colloquy/plugin-whatsapp';
import type { McpToolSourceOptions } from '@colloquy/runtime';
import JSON5 from 'json5';
import { CLI } from '../cli/cli-name.js';
import {
  type AppSection,
  AppSectionSchema,
  type StorageSection,
  StorageSectionSchema,
  type TelemetrySection,
  TelemetrySectionSchema,
  type WebChatSection,
} from './app-schema.js';
import { pluginSections } from './channel-settings.js';
import { collectConfigSecrets } from './config-secrets.js';
import { applyEnvironment, ENV, type Env, environmentSecrets } from './env-overlay.js';
import { checkMcpSection, mcpAllowIssues, mcpToolSourceOptions } from './mcp-config.js';
import { DEFAULT_STATE_DIR, invocationDir, locateConfigFile } from './paths.js';

/** The channels the app knows; other keys under `channels` are refused. */
export const KNOWN_CHANNELS = ['webchat', 'telegram', 'discord', 'slack', 'whatsapp'] as const;

/** The platform channels turned on by config or environment, with their resolved sections. */
export interface PlatformSections {
  /** The resolved `channels.telegram` section, when the channel is turned on. */
  telegram?: TelegramConfig;
  /** The resolved `channels.discord` section, when the channel is turned on. */
  discord?: DiscordConfig;
  /** The resolved `channels.slack` section, when the channel is turned on. */
  slack?: SlackConfig;
  /** The resolved `channels.whatsapp` section, when the channel is turned on. */
  whatsapp?: WhatsAppConfig;
}

/** A loaded, validated app config. */
export interface BotConfig {
  /** The config file, or `undefined` when the embedded default is used. */
  file: string | undefined;
  /** The core config (`resolveConfig`), with every secret the config and environment hold added to `redaction.secrets`. */
  core: ColloquyConfig;
  /** The `app` section. */
  app: AppSection;
  /** The `storage` section (`storage.url` or `COLLOQUY_DATABASE_URL` selects PostgreSQL). */
  storage: StorageSection;
  /** The `channels.webchat` section. */
  webchat: WebChatSection;
  /** The platform channel sections that are present (each validated by its plugin). */
  platforms: PlatformSections;
  /**
   * The `mcp` section as the runtime's options (bearer tokens read from their variables): the MCP
   * servers whose tools agents may use (`agents.list[].tools.allow`).
   */
  mcp: McpToolSourceOptions;
  /** The `telemetry` section: OpenTelemetry export (the environment's `OTEL_*` variables fill what it leaves out). */
  telemetry: TelemetrySection;
  /** The absolute state directory. */
  stateDir: string;
  /** The directory relative paths on the command line are resolved from. */
  baseDir: string;
  /** Settings the environment filled, e.g. `agents.defaults.model from COLLOQUY_MODEL`. */
  fromEnvironment: string[];
}

/** Options of {@link loadBotConfig}. */
export interface LoadBotConfigOptions {
  /** The config file (`--config`). Default: `COLLOQUY_CONFIG`, else `./colloquy.json5` when present. */
  configFile?: string;
  /** The state directory (`--state-dir`); wins over the config and `COLLOQUY_STATE_DIR`. */
  stateDir?: string;
  /** The environment. Default `process.env`. */
  env?: Env;
  /** Where relative command-line paths start. Default: the invocation directory. */
  baseDir?: string;
}

/** The outcome of {@link loadBotConfig}. */
export type BotConfigLoad =
  | { ok: true; config: BotConfig }
  | { ok: false; file: string | undefined; issues: ConfigIssue[]; fromEnvironment: string[] };

/**
 * Loads the app config: reads the JSON5 file (or uses the embedded default), lets the environment
 * fill what the file leaves out, then validates everything: the core settings with `checkConfig`,
 * the `app` and `channels.webchat` sections with the app's schema, and each platform section with
 * its plugin's resolver. Every problem is reported, not just the first.
 *
 * @param options - config file, state dir, environment
 * @returns the config, or every issue found (`path`, `expected`, `got`)
 * @example
 * ```ts
 * const loaded = await loadBotConfig({ configFile: 'colloquy.json5' });
 * if (!loaded.ok) console.error(formatIssues(loaded.issues));
 * ```
 */
export async function loadBotConfig(options: LoadBotConfigOptions = {}): Promise<BotConfigLoad> {
  const env = options.env ?? process.env;
  const baseDir = options.baseDir ?? invocationDir(env);
  const file = locateConfigFile(options.configFile, baseDir, env);
  let raw: Record<string, unknown> = {};
  if (file !== undefined) {
    const read = await readConfigFile(file);
    if (!read.ok) return { ok: false, file, issues: [read.issue], fromEnvironment: [] };
    raw = read.value;
  }
  const { input, applied } = applyEnvironment(raw, env);
  const issues: ConfigIssue[] = [];

  const {
    app: appInput,
    storage: storageInput,
    mcp: mcpInput,
    telemetry: telemetryInput,
    ...coreInput
  } = input;
  const checked = checkConfig(coreInput);
  if (!checked.ok) issues.push(...checked.issues);
  // The runtime reads channels.<id>.progress from the core config; the plugins never see it.
  const channelsInput = pluginSections(isRecord(coreInput.channels) ? coreInput.channels : {}, issues);

  const app = checkSection(AppSectionSchema, appInput, { path: 'app' });
  if (!app.ok) issues.push(...app.issues);
  const storage = checkSection(StorageSectionSchema, storageInput, { path: 'storage' });
  if (!storage.ok) issues.push(...storage.issues);
  const telemetry = checkSection(TelemetrySectionSchema, telemetryInput, { path: 'telemetry' });
  if (!telemetry.ok) issues.push(...telemetry.issues);
  const mcp = checkMcpSection(mcpInput, env);
  if (!mcp.ok) issues.push(...mcp.issues);
  if (checked.ok && mcp.ok) issues.push(...mcpAllowIssues(checked.config, mcp.value));
  const webchat = sectionIssues(() => resolveWebChatConfig(channelsInput.webchat));
  if (!webchat.ok) issues.push(...webchat.issues);

  for (const id of Object.keys(channelsInput)) {
    if (!(KNOWN_CHANNELS as readonly string[]).includes(id)) {
      issues.push({
        path: `channels.${id}`,
        expected: `one of the channels this app runs (${KNOWN_CHANNELS.join(', ')})`,
        got: 'unknown channel',
      });
    }
  }
  const platforms = await resolvePlatforms(channelsInput, env, issues);

  if (issues.length > 0 || !checked.ok || !app.ok || !storage.ok || !telemetry.ok || !mcp.ok || !webchat.ok) {
    return { ok: false, file, issues, fromEnvironment: applied };
  }
  const core = checked.config;
  const secrets = new Set([
    ...core.redaction.secrets,
    ...environmentSecrets(env),
    ...collectConfigSecrets(input, env),
  ]);
  core.redaction.secrets = [...secrets];
  return {
    ok: true,
    config: {
      file,
      core,
      app: app.value,
      storage: storage.value,
      webchat: webchat.value,
      platforms,
      mcp: mcpToolSourceOptions(mcp.value, env),
      telemetry: telemetry.value,
      stateDir: resolveStateDir(options.stateDir, app.value, file, baseDir, env),
      baseDir,
      fromEnvironment: applied,
    },
  };
}

/**
 * The state directory: `--state-dir`, else `app.stateDir` (relative to the config file), else
 * `COLLOQUY_STATE_DIR`, else `./.colloquy` (both relative to the invocation directory).
 */
function resolveStateDir(
  flag: string | undefined,
  app: AppSection,
  file: string | undefined,
  baseDir: string,
  env: Env,
): string {
  if (flag) return resolve(baseDir, flag);
  if (app.stateDir) return resolve(file ? dirname(file) : baseDir, app.stateDir);
  const fromEnv = env[ENV.stateDir]?.trim();
  return resolve(baseDir, fromEnv || DEFAULT_STATE_DIR);
}

async function readConfigFile(
  file: string,
): Promise<{ ok: true; value: Record<string, unknown> } | { ok: false; issue: ConfigIssue }> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return {
      ok: false,
      issue: {
        path: '(file)',
        expected: `a readable config file at ${file} (create one with \`${CLI} init\`)`,
        got: code === 'ENOENT' ? 'no such file' : String(code ?? error),
      },
    };
  }
  let value: unknown;
  try {
    value = JSON5.parse(text);
  } catch (error) {
    return {
      ok: false,
      issue: {
        path: '(file)',
        expected: 'valid JSON5',
        got: error instanceof Error ? error.message : String(error),
      },
    };
  }
  if (!isRecord(value)) {
    return {
      ok: false,
      issue: { path: '(root)', expected: 'an object', got: describeConfigValue('', value) },
    };
  }
  return { ok: true, value };
}

/**
 * Validates the platform sections that are present with their plugins' resolvers (each plugin is
 * loaded only when its section exists), adding every problem to `issues`.
 */
async function resolvePlatforms(
  channels: Record<string, unknown>,
  env: Env,
  issues: ConfigIssue[],
): Promise<PlatformSections> {
  const platforms: PlatformSections = {};
  const keep = <T>(outcome: SectionOutcome<T>): T | undefined => {
    if (outcome.ok) return outcome.value;
    issues.push(...outcome.issues);
    return undefined;
  };
  if (channels.telegram !== undefined) {
    const { resolveTelegramConfig } = await import('@colloquy/plugin-telegram');
    const telegram = keep(sectionIssues(() => resolveTelegramConfig(channels.telegram)));
    if (telegram) platforms.telegram = telegram;
  }
  if (channels.discord !== undefined) {
    const { resolveDiscordConfig } = await import('@colloquy/plugin-discord');
    const discord = keep(sectionIssues(() => resolveDiscordConfig(channels.discord)));
    const unset = discord?.accounts.flatMap((account, index) =>
      account.token === undefined && account.tokenEnv !== undefined && !env[account.tokenEnv]
        ? [
            {
              path: `channels.discord.accounts[${index}].tokenEnv`,
              expected: `the name of a set environment variable (export ${account.tokenEnv}=<bot token>)`,
              got: `${account.tokenEnv} (not set)`,
            },
          ]
        : [],
    );
    issues.push(...(unset ?? []));
    if (discord && unset?.length === 0) platforms.discord = discord;
  }
  if (channels.slack !== undefined) {
    const { resolveSlackConfig } = await import('@colloquy/plugin-slack');
    const slack = keep(sectionIssues(() => resolveSlackConfig(channels.slack)));
    const unset = slack?.accounts.flatMap((account, index) =>
      (['botToken', 'appToken', 'signingSecret'] as const).flatMap((field) => {
        const variable = account[`${field}Env`];
        return account[field] === undefined && variable !== undefined && !env[variable]
          ? [
              {
                path: `channels.slack.accounts[${index}].${field}Env`,
                expected: `the name of a set environment variable (export ${variable}=<${field}>)`,
                got: `${variable} (not set)`,
              },
            ]
          : [];
      }),
    );
    issues.push(...(unset ?? []));
    if (slack && unset?.length === 0) platforms.slack = slack;
  }
  if (channels.whatsapp !== undefined) {
    const { resolveWhatsAppConfig } = await import('@colloquy/plugin-whatsapp');
    const whatsapp = keep(sectionIssues(() => resolveWhatsAppConfig(channels.whatsapp)));
    if (whatsapp) platforms.whatsapp = whatsapp;
  }
  return platforms;
}

type SectionOutcome<T> = { ok: true; value: T } | { ok: false; issues: ConfigIssue[] };

/** Runs a plugin's section resolver, turning its `CONFIG_INVALID` error into the issues it lists. */
function sectionIssues<T>(resolveSection: () => T): SectionOutcome<T> {
  try {
    return { ok: true, value: resolveSection() };
  } catch (error) {
    if (isColloquyError(error) && error.code === 'CONFIG_INVALID' && Array.isArray(error.details.issues)) {
      return { ok: false, issues: (error.details.issues as ConfigIssue[]).map((issue) => ({ ...issue })) };
    }
    throw error;
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
