import { join } from 'node:path';
import { ColloquyError, formatIssues, isColloquyError } from '@colloquy/core';
import { createGatewayClient, type GatewayClient } from '@colloquy/runtime';
import { ENV } from '../config/env-overlay.js';
import { type BotConfig, loadBotConfig } from '../config/load-config.js';
import { type RunInfo, readRunInfo, readSecretFile, STATE_FILES } from '../state/state-dir.js';
import type { CliIo } from './cli-io.js';
import { CLI } from './cli-name.js';

/** Flags every gateway command accepts. */
export interface ConnectFlags {
  url?: string;
  token?: string;
  config?: string;
  stateDir?: string;
}

/** An open gateway connection and what the CLI learnt finding it. */
export interface Connection {
  client: GatewayClient;
  url: string;
  /** `run.json` of the running bot, when found in the state directory. */
  runInfo: RunInfo | undefined;
  /** The loaded config, when it loaded. */
  config: BotConfig | undefined;
}

/**
 * Finds and connects to the running bot's gateway. The URL: `--url`, else `COLLOQUY_GATEWAY_URL`,
 * else the running bot's `run.json` in the state directory, else `gateway.host`/`port` from the
 * config. The token: `--token`, else `COLLOQUY_TOKEN`, else `gateway.token`, else the state
 * directory's `admin-token`.
 *
 * @param flags - command-line flags
 * @param io - the environment
 * @returns the connection (close `client` when done)
 * @throws ColloquyError `CONFIG_INVALID` (no token found, or a broken config), `ABORTED` when
 *   nothing answers at the URL, `UNAUTHORIZED` when the token is refused
 */
export async function connectGateway(flags: ConnectFlags, io: CliIo): Promise<Connection> {
  const loaded = await loadBotConfig({
    ...(flags.config ? { configFile: flags.config } : {}),
    ...(flags.stateDir ? { stateDir: flags.stateDir } : {}),
    env: io.env,
  });
  const config = loaded.ok ? loaded.config : undefined;
  const explicitUrl = flags.url ?? io.env[ENV.gatewayUrl]?.trim();
  const explicitToken = flags.token ?? io.env[ENV.token]?.trim();
  if (!config && (!explicitUrl || !explicitToken)) {
    throw new ColloquyError(
      'CONFIG_INVALID',
      `${loaded.ok ? '' : formatIssues(loaded.issues)}\nOr pass --url and --token to reach a bot without its config.`,
    );
  }
  const runInfo = config ? await readRunInfo(config.stateDir) : undefined;
  const url =
    explicitUrl || runInfo?.gatewayUrl || `ws://${config!.core.gateway.host}:${config!.core.gateway.port}`;
  const token =
    explicitToken ||
    config?.core.gateway.token ||
    (config ? await readSecretFile(join(config.stateDir, STATE_FILES.adminToken)) : undefined);
  if (!token) {
    throw new ColloquyError(
      'CONFIG_INVALID',
      `No admin token found in ${config!.stateDir}. Start the bot once (${CLI} start) to create it, or pass --token / set ${ENV.token}.`,
    );
  }
  const client = createGatewayClient({ url, token, reconnect: false, requestTimeoutMs: 15_000 });
  try {
    await client.ready();
  } catch (error) {
    await client.close();
    if (isColloquyError(error) && error.code === 'UNAUTHORIZED') {
      throw new ColloquyError(
        'UNAUTHORIZED',
        `The gateway at ${url} refused the token. Use the admin token of that bot (--token or ${ENV.token}).`,
      );
    }
    throw new ColloquyError(
      'ABORTED',
      `Cannot reach the Colloquy gateway at ${url}. Is the bot running? Start it with \`${CLI} start\`.`,
      { url, reason: 'unreachable' },
      { cause: error },
    );
  }
  return { client, url, runInfo, config };
}
