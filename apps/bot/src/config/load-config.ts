import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { type ColloquyConfig, type ConfigIssue, checkConfig, isColloquyError } from '@colloquy/core';
import { Value } from '@sinclair/typebox/value';
import JSON5 from 'json5';
import {
  type AppSection,
  AppSectionSchema,
  type StorageSection,
  StorageSectionSchema,
  type WebChatSection,
  WebChatSectionSchema,
} from './app-schema.js';
import { collectConfigSecrets } from './config-secrets.js';
import { applyEnvironment, ENV, type Env, environmentSecrets } from './env-overlay.js';
import { DEFAULT_STATE_DIR, invocationDir, locateConfigFile } from './paths.js';
import { describeValue, schemaIssues } from './schema-issues.js';

/** The channels the app knows; other keys under `channels` are refused. */
export const KNOWN_CHANNELS = ['webchat', 'telegram', 'discord', 'whatsapp'] as const;

/** The platform channels turned on by config or environment, with their raw (validated) sections. */
export interface PlatformSections {
  telegram?: unknown;
  discord?: unknown;
  whatsapp?: unknown;
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

  const { app: appInput, storage: storageInput, ...coreInput } = input;
  const channelsInput = isRecord(coreInput.channels) ? coreInput.channels : {};
  const checked = checkConfig(coreInput);
  if (!checked.ok) issues.push(...checked.issues);

  const app = Value.Default(AppSectionSchema, structuredClone(appInput ?? {})) as AppSection;
  issues.push(...schemaIssues(AppSectionSchema, app, 'app'));
  const storage = Value.Default(StorageSectionSchema, structuredClone(storageInput ?? {})) as StorageSection;
  issues.push(...schemaIssues(StorageSectionSchema, storage, 'storage'));
  const webchat = Value.Default(
    WebChatSectionSchema,
    structuredClone(channelsInput.webchat ?? {}),
  ) as WebChatSection;
  issues.push(...schemaIssues(WebChatSectionSchema, webchat, 'channels.webchat'));

  for (const id of Object.keys(channelsInput)) {
    if (!(KNOWN_CHANNELS as readonly string[]).includes(id)) {
      issues.push({
        path: `channels.${id}`,
        expected: `one of the channels this app runs (${KNOWN_CHANNELS.join(', ')})`,
        got: 'unknown channel',
      });
    }
  }
  const platforms: PlatformSections = {};
  for (const id of ['telegram', 'discord', 'whatsapp'] as const) {
    const section = channelsInput[id];
    if (section === undefined) continue;
    const found = await platformIssues(id, section, env);
    issues.push(...found);
    if (found.length === 0) platforms[id] = section;
  }

  if (issues.length > 0 || !checked.ok) return { ok: false, file, issues, fromEnvironment: applied };
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
      app,
      storage,
      webchat,
      platforms,
      stateDir: resolveStateDir(options.stateDir, app, file, baseDir, env),
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
        expected: `a readable config file at ${file} (create one with \`colloquy init\`)`,
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
    return { ok: false, issue: { path: '(root)', expected: 'an object', got: describeValue('', value) } };
  }
  return { ok: true, value };
}

/** Validates one platform section with its plugin's resolver (loaded only when the section exists). */
async function platformIssues(
  id: 'telegram' | 'discord' | 'whatsapp',
  section: unknown,
  env: Env,
): Promise<ConfigIssue[]> {
  try {
    if (id === 'telegram') {
      const { resolveTelegramConfig } = await import('@colloquy/plugin-telegram');
      resolveTelegramConfig(section);
    } else if (id === 'discord') {
      const { resolveDiscordConfig } = await import('@colloquy/plugin-discord');
      const resolved = resolveDiscordConfig(section);
      return resolved.accounts.flatMap((account, index) =>
        account.token === undefined && account.tokenEnv !== undefined && !env[account.tokenEnv]
          ? [
              {
                path: `channels.discord.accounts.${index}.tokenEnv`,
                expected: `the name of a set environment variable (export ${account.tokenEnv}=<bot token>)`,
                got: `${account.tokenEnv} (not set)`,
              },
            ]
          : [],
      );
    } else {
      const { resolveWhatsAppConfig } = await import('@colloquy/plugin-whatsapp');
      resolveWhatsAppConfig(section);
    }
    return [];
  } catch (error) {
    if (isColloquyError(error) && error.code === 'CONFIG_INVALID' && Array.isArray(error.details.issues)) {
      return (error.details.issues as ConfigIssue[]).map((issue) => ({ ...issue }));
    }
    throw error;
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
