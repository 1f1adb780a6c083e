import { relative } from 'node:path';
import { ColloquyError, formatIssues, isColloquyError } from '@colloquy/core';
import { installSignalHandlers } from '@colloquy/runtime';
import { type Bot, startBot } from '../../bot/start-bot.js';
import { ENV } from '../../config/env-overlay.js';
import { type BotConfig, loadBotConfig } from '../../config/load-config.js';
import { checkModels } from '../../config/model-check.js';
import { MODEL_HELP } from '../../config/model-help.js';
import { createAppLogger, type LogFormat } from '../../logging/create-logger.js';
import { describeStorage } from '../../state/open-store.js';
import { STATE_FILES } from '../../state/state-dir.js';
import { busyPortMessage, busyPortOf } from '../busy-port.js';
import { type CliIo, writeLines } from '../cli-io.js';
import { CLI } from '../cli-name.js';
import { parseFlags } from '../parse-flags.js';

const FLAGS = {
  config: { type: 'string', short: 'c' },
  'state-dir': { type: 'string' },
  'log-format': { type: 'string' },
  'log-level': { type: 'string' },
} as const;

/**
 * `colloquy start`: loads the config (or the embedded default), starts the bot, prints where it is,
 * and runs until SIGINT or SIGTERM (exit 0), or a failure that leaves the bot unable to run (exit 1),
 * which take the one shutdown path.
 *
 * @param args - arguments after `start`
 * @param io - streams and environment
 * @returns the exit code once the bot stopped (0 clean, 1 failed)
 */
export async function startCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseFlags(args, FLAGS, 'start');
  const format = (values['log-format'] ?? io.env[ENV.logFormat] ?? 'auto') as LogFormat;
  if (!['auto', 'pretty', 'json'].includes(format)) {
    throw new ColloquyError('INVALID_ARGUMENT', '--log-format must be auto, pretty or json.');
  }
  const loaded = await loadBotConfig({
    ...(values.config ? { configFile: values.config } : {}),
    ...(values['state-dir'] ? { stateDir: values['state-dir'] } : {}),
    env: io.env,
  });
  if (!loaded.ok) {
    writeLines(io.err, formatIssues(loaded.issues), `(config: ${loaded.file ?? 'embedded default'})`);
    return 1;
  }
  const config = loaded.config;
  // A bot whose model cannot work would answer nothing: refuse now, not at the first message.
  const models = checkModels(config, io.env);
  if (models.length > 0) {
    writeLines(io.err, ...models.map((problem) => `Colloquy cannot start: ${problem.message}`));
    return 1;
  }
  const secrets = [...config.core.redaction.secrets];
  const logger = await createAppLogger({
    level: values['log-level'] ?? config.app.logLevel,
    format,
    secrets,
    destination: io.out,
  });
  // Signals are handled from here on, so a Ctrl-C during start-up also takes the shutdown path, and
  // so does a failure that leaves the bot unable to run (it then exits 1, for a supervisor to restart it).
  let stopRequested = false;
  const failure = new AbortController();
  const started = startBot({ config, logger, onFailure: (error) => failure.abort(error) });
  const exitCode = new Promise<number>((resolve) => {
    installSignalHandlers(
      {
        shutdown: async (options) => {
          stopRequested = true;
          const running = await started.catch(() => undefined);
          await running?.stop(options);
        },
      },
      { logger, exit: resolve, failure: failure.signal },
    );
  });
  let bot: Bot;
  try {
    bot = await started;
  } catch (error) {
    const busy = busyPortOf(error);
    if (busy) {
      // Not a bug: no stack trace, just who probably holds the port and how to choose others.
      logger.error({ ...busy }, 'start failed: the port is in use');
      writeLines(io.err, `Colloquy could not start: ${await busyPortMessage(busy, config)}`);
      return 1;
    }
    const message = isColloquyError(error) || error instanceof Error ? error.message : String(error);
    logger.error({ err: error }, 'start failed');
    writeLines(io.err, `Colloquy could not start: ${message}`);
    return 1;
  }
  secrets.push(bot.adminToken);
  if (!stopRequested) {
    writeLines(io.out, ...banner(bot, config));
    logger.info({ gateway: bot.gatewayUrl, webchat: bot.webchatUrl, channels: bot.channels }, 'ready');
  }
  return exitCode;
}

function banner(bot: Bot, config: BotConfig): string[] {
  const stateDir = displayPath(config.stateDir, config.baseDir);
  const lines = ['', 'Colloquy is running.'];
  if (bot.webchatUrl) lines.push(`  Web chat:    ${bot.webchatUrl}`);
  if (bot.adminTokenCreated) {
    if (bot.webchatUrl) lines.push(`  Owner page:  ${bot.webchatUrl}?admin=${bot.adminToken}`);
    lines.push(
      `  Admin token: ${bot.adminToken}`,
      `               (shown once; kept in ${stateDir}/${STATE_FILES.adminToken}, mode 0600)`,
    );
  } else if (bot.webchatUrl) {
    lines.push(`  Owner page:  ${bot.webchatUrl}?admin=<the token in ${stateDir}/${STATE_FILES.adminToken}>`);
  }
  lines.push(`  Gateway:     ${bot.gatewayUrl}`);
  lines.push(`  Channels:    ${bot.channels.join(', ') || 'none'}`);
  lines.push(`  Storage:     ${describeStorage(config)}`);
  lines.push(`  State:       ${stateDir}`);
  lines.push(`  Config:      ${config.file ? displayPath(config.file, config.baseDir) : 'embedded default'}`);
  if (bot.model) {
    lines.push(`  Model:       ${bot.model}`);
  } else {
    lines.push(
      '  Model:       none. The bot answers slash commands (/help); to chat, restart it with a model:',
    );
    lines.push(MODEL_HELP);
  }
  lines.push(`  CLI:         ${CLI} status   (also: sessions list, sessions send main "hi")`);
  lines.push('Press Ctrl-C to stop.', '');
  return lines;
}

function displayPath(path: string, base: string): string {
  const rel = relative(base, path);
  return rel === '' ? '.' : rel.startsWith('..') ? path : `./${rel}`;
}
