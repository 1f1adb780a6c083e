import { join } from 'node:path';
import { isColloquyError } from '@colloquy/core';
import { ENV } from '../config/env-overlay.js';
import type { BotConfig } from '../config/load-config.js';
import { DEFAULT_STATE_DIR } from '../config/paths.js';
import { readRunInfo } from '../state/state-dir.js';
import { CLI } from './cli-name.js';

/** A listen address that was already taken. */
export interface BusyPort {
  host: string;
  port: number;
}

/**
 * The address a start failed on because another process listens there (`EADDRINUSE` anywhere in the
 * cause chain of an error whose `details` name `host` and `port`).
 *
 * @param error - what `startBot` threw
 * @returns the address, or `undefined` for any other failure
 */
export function busyPortOf(error: unknown): BusyPort | undefined {
  if (!isColloquyError(error)) return undefined;
  const { host, port } = error.details as { host?: unknown; port?: unknown };
  if (typeof host !== 'string' || typeof port !== 'number') return undefined;
  for (let cause: unknown = error; cause instanceof Error; cause = cause.cause) {
    if ((cause as NodeJS.ErrnoException).code === 'EADDRINUSE') return { host, port };
  }
  return undefined;
}

/**
 * Explains a busy port: which server wanted it, the pid of the Colloquy that probably holds it (from
 * `run.json` in this state directory or the default one, when its process is alive), and how to pick
 * other ports.
 *
 * @param busy - the address
 * @param config - the config the start used
 * @returns one paragraph for the terminal
 */
export async function busyPortMessage(busy: BusyPort, config: BotConfig): Promise<string> {
  const what = busy.port === config.core.gateway.port ? 'the gateway' : 'the web chat';
  const dirs = [...new Set([config.stateDir, join(config.baseDir, DEFAULT_STATE_DIR)])];
  let holder: string | undefined;
  for (const dir of dirs) {
    const info = await readRunInfo(dir);
    const urls = [info?.gatewayUrl, info?.webchatUrl].filter((u): u is string => u !== undefined);
    if (info && urls.some((url) => new URL(url).port === String(busy.port))) {
      holder = `pid ${info.pid}, see ${join(dir, 'run.json')}`;
      break;
    }
  }
  const where = config.file ?? `a config file (\`${CLI} init\` writes one)`;
  return [
    `${busy.host}:${busy.port} (${what}) is already in use: Colloquy is probably already running${holder ? ` (${holder})` : ''}.`,
    `Stop it first, or run this one on other ports: ${ENV.webchatPort}=8420 ${ENV.gatewayPort}=8421 ${CLI} start, or set channels.webchat.port and gateway.port in ${where} (0 picks free ones).`,
  ].join('\n');
}
