import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { ColloquyError, formatIssues } from '@colloquy/core';
import { CONFIG_TEMPLATE } from '../../config/config-template.js';
import { type BotConfig, loadBotConfig } from '../../config/load-config.js';
import { checkModels } from '../../config/model-check.js';
import { DEFAULT_CONFIG_FILE, invocationDir } from '../../config/paths.js';
import { type CliIo, writeLines } from '../cli-io.js';
import { CLI } from '../cli-name.js';
import { parseFlags } from '../parse-flags.js';

/**
 * `colloquy config check`: loads the config exactly as `start` would (file, environment, every
 * section) and explains each problem as `path: expected X, got Y`. With a PostgreSQL
 * `storage.url` it also connects and says what is wrong (host unreachable, authentication
 * failed, database missing), with the password masked.
 *
 * @param args - arguments after `config check`
 * @param io - streams and environment
 * @returns 0 when valid, 1 otherwise
 */
export async function configCheckCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseFlags(
    args,
    { config: { type: 'string', short: 'c' }, 'state-dir': { type: 'string' }, json: { type: 'boolean' } },
    'config check',
  );
  const loaded = await loadBotConfig({
    ...(values.config ? { configFile: values.config } : {}),
    ...(values['state-dir'] ? { stateDir: values['state-dir'] } : {}),
    env: io.env,
  });
  const source = loaded.ok ? loaded.config.file : loaded.file;
  const storage = loaded.ok ? await checkStorage(loaded.config) : undefined;
  const models = loaded.ok ? checkModels(loaded.config, io.env) : [];
  const ok = loaded.ok && storage?.ok !== false && models.length === 0;
  if (values.json) {
    const body = loaded.ok
      ? { ok, file: source ?? null, fromEnvironment: loaded.config.fromEnvironment, storage, models }
      : { ok: false, file: source ?? null, issues: loaded.issues };
    writeLines(io.out, JSON.stringify(body, null, 2));
    return ok ? 0 : 1;
  }
  if (!loaded.ok) {
    writeLines(io.err, `Config: ${source ?? 'embedded default'}`, formatIssues(loaded.issues));
    if (loaded.fromEnvironment.length > 0) {
      writeLines(io.err, `Filled from the environment: ${loaded.fromEnvironment.join('; ')}`);
    }
    return 1;
  }
  const { config } = loaded;
  if (!ok) {
    writeLines(
      io.err,
      `Config: ${source ?? 'embedded default'}`,
      ...(storage && !storage.ok ? [`  Storage: ${storage.message}`] : []),
      ...models.map((problem) => `  Model: ${problem.message}`),
    );
    return 1;
  }
  const channels = [config.webchat.enabled ? 'webchat' : '', ...Object.keys(config.platforms)].filter(
    Boolean,
  );
  writeLines(
    io.out,
    `Config OK: ${source ?? 'embedded default (no colloquy.json5 found)'}`,
    `  Model:    ${config.core.agents.defaults.model ?? 'none (the bot will answer slash commands only)'}`,
    `  Channels: ${channels.join(', ') || 'none'}`,
    `  Gateway:  ws://${config.core.gateway.host}:${config.core.gateway.port}`,
    `  Storage:  ${storage?.ok ? storage.description : 'SQLite, colloquy.db in the state directory'}`,
    `  State:    ${config.stateDir}`,
    ...(config.fromEnvironment.length > 0
      ? [`  From the environment: ${config.fromEnvironment.join('; ')}`]
      : []),
    ...exposureWarnings(config),
  );
  return 0;
}

const ALL_INTERFACES = new Set(['0.0.0.0', '::']);

/** Warnings for servers bound to every interface: reachable from the network, so TLS belongs in front. */
function exposureWarnings(config: BotConfig): string[] {
  const warnings: string[] = [];
  if (config.webchat.enabled && ALL_INTERFACES.has(config.webchat.host)) {
    warnings.push(
      `  Warning: channels.webchat.host is "${config.webchat.host}": the web chat is reachable from the network. Put a TLS proxy in front, set channels.webchat.secureCookies and list your domain in channels.webchat.allowedHosts.`,
    );
  }
  if (ALL_INTERFACES.has(config.core.gateway.host)) {
    warnings.push(
      `  Warning: gateway.host is "${config.core.gateway.host}": the gateway (admin token auth) is reachable from the network. Keep it on 127.0.0.1, or put a TLS proxy in front.`,
    );
  }
  return warnings;
}

/** The answer of {@link checkStorage}: a reachable store, or why it is not. */
type StorageCheck = { ok: true; description: string } | { ok: false; message: string };

/** Connects to a PostgreSQL `storage.url`; SQLite needs no check (`undefined`). */
async function checkStorage(config: BotConfig): Promise<StorageCheck | undefined> {
  const url = config.storage.url;
  if (url === undefined) return undefined;
  const { checkPostgresConnection, redactDatabaseUrl } = await import('@colloquy/store-postgres');
  const result = await checkPostgresConnection(url, { timeoutMs: 5000 });
  const from = config.fromEnvironment.some((line) => line.startsWith('storage.url'))
    ? 'COLLOQUY_DATABASE_URL'
    : 'storage.url';
  return result.ok
    ? { ok: true, description: `PostgreSQL, ${redactDatabaseUrl(url)} (connected)` }
    : { ok: false, message: `${result.message} (from ${from})` };
}

/**
 * `colloquy init`: writes a commented JSON5 config (default `./colloquy.json5`), refusing to
 * overwrite an existing file unless `--force`.
 *
 * @param args - arguments after `init`
 * @param io - streams and environment
 * @returns 0 when written, 1 otherwise
 * @throws ColloquyError `CONFLICT` when the file exists and `--force` is not given
 */
export async function initCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseFlags(
    args,
    { config: { type: 'string', short: 'c' }, force: { type: 'boolean' } },
    'init',
  );
  const file = resolve(invocationDir(io.env), values.config ?? DEFAULT_CONFIG_FILE);
  try {
    await writeFile(file, CONFIG_TEMPLATE, { flag: values.force ? 'w' : 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
      throw new ColloquyError(
        'CONFLICT',
        `${file} already exists. Edit it, or pass --force to replace it with a fresh template.`,
        { file },
      );
    }
    throw error;
  }
  writeLines(
    io.out,
    `Wrote ${file}.`,
    'Next: set a model in it (agents.defaults.model and models.providers), then run',
    `  ${CLI} config check${values.config ? ` --config ${values.config}` : ''}`,
    `  ${CLI} start${values.config ? ` --config ${values.config}` : ''}`,
  );
  return 0;
}
