/**
 * `colloquy mcp list` and `colloquy mcp probe <name>`: the MCP servers whose tools the agents use
 * (the `mcp` section), their state in the running bot, and a one-off start of one server to see
 * that it works and what it offers.
 */
import { ColloquyError, formatIssues, type Logger, silentLogger } from '@colloquy/core';
import { createMcpToolSource, type McpServerStatus } from '@colloquy/runtime';
import { type BotConfig, loadBotConfig } from '../../config/load-config.js';
import { readRunInfo } from '../../state/state-dir.js';
import { type CliIo, writeLines } from '../cli-io.js';
import { CLI } from '../cli-name.js';
import { parseFlags } from '../parse-flags.js';
import { renderTable } from '../render-table.js';

const FLAGS = {
  config: { type: 'string', short: 'c' },
  'state-dir': { type: 'string' },
  json: { type: 'boolean' },
} as const;

/**
 * `colloquy mcp list`: every configured MCP server with its transport, its state in the running bot
 * (from `run.json`, refreshed every few seconds) and its tools as the model sees them. Without a
 * running bot the state is `not running` and the tools are unknown (`colloquy mcp probe` starts one).
 *
 * @param args - arguments after `mcp list`
 * @param io - streams and environment
 * @returns 0
 * @throws ColloquyError `CONFIG_INVALID` when the config has problems
 */
export async function mcpListCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseFlags(args, FLAGS, 'mcp list');
  const config = await loadConfig(values, io);
  const running = (await readRunInfo(config.stateDir))?.mcp;
  const servers: (McpServerStatus | NotRunning)[] = Object.entries(config.mcp.servers).map(
    ([name, server]) =>
      running?.find((status) => status.name === name) ?? {
        name,
        transport: 'command' in server ? 'stdio' : 'http',
        state: 'not running',
        tools: [],
      },
  );
  if (values.json) {
    writeLines(io.out, JSON.stringify({ servers }, null, 2));
    return 0;
  }
  if (servers.length === 0) {
    writeLines(io.out, `No MCP servers are configured (mcp.servers). See \`${CLI} mcp --help\`.`);
    return 0;
  }
  writeLines(
    io.out,
    renderTable(
      ['SERVER', 'TRANSPORT', 'STATE', 'TOOLS'],
      servers.map((s) => [s.name, s.transport, s.state, toolsCell(s)]),
      100,
    ),
    ...servers.flatMap((s) => ('error' in s && s.error ? [`${s.name}: ${s.error}`] : [])),
  );
  return 0;
}

/**
 * `colloquy mcp probe <name>`: starts one configured server in this process (the running bot's copy is
 * not touched), lists its tools as the model would see them, shows what it wrote to stderr, and stops it.
 *
 * @param args - arguments after `mcp probe`
 * @param io - streams and environment
 * @returns 0 when the server started, 1 when it did not
 * @throws ColloquyError `INVALID_ARGUMENT` without a name or for one that is not configured
 */
export async function mcpProbeCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags(args, FLAGS, 'mcp probe');
  const name = positionals[0];
  if (!name) throw new ColloquyError('INVALID_ARGUMENT', `Name the server: ${CLI} mcp probe <name>.`);
  const config = await loadConfig(values, io);
  const server = config.mcp.servers[name];
  if (!server) {
    const known = Object.keys(config.mcp.servers).join(', ') || 'none';
    throw new ColloquyError(
      'INVALID_ARGUMENT',
      `No MCP server "${name}" is configured (mcp.servers: ${known}).`,
    );
  }
  const lines: string[] = [];
  const source = createMcpToolSource({
    ...config.mcp,
    servers: { [name]: server },
    logger: probeLogger(lines),
    secrets: config.core.redaction.secrets,
  });
  try {
    const status = await source.probe(name);
    const ready = status.state === 'ready';
    if (values.json) {
      writeLines(io.out, JSON.stringify({ ...status, log: lines }, null, 2));
      return ready ? 0 : 1;
    }
    if (lines.length > 0) writeLines(io.err, ...lines.map((line) => `  ${line}`));
    if (!ready) {
      writeLines(io.err, `${name}: ${status.error ?? status.state}`);
      return 1;
    }
    writeLines(
      io.out,
      `${name} (${status.transport}) started and lists ${status.tools.length} tool${status.tools.length === 1 ? '' : 's'}:`,
      ...status.tools.map((tool) => `  ${tool}`),
      `Agents use them when agents.list[].tools.allow names them, e.g. "${name}__*".`,
    );
    return 0;
  } finally {
    await source.close();
  }
}

/** A configured server the running bot does not report (it is not running). */
interface NotRunning {
  name: string;
  transport: 'stdio' | 'http';
  state: 'not running';
  tools: string[];
}

function toolsCell(status: McpServerStatus | NotRunning): string {
  if (status.state === 'not running' || (status.state === 'idle' && status.tools.length === 0)) {
    return `unknown until started (${CLI} mcp probe ${status.name})`;
  }
  return status.tools.join(', ') || 'none';
}

async function loadConfig(values: { config?: string; 'state-dir'?: string }, io: CliIo): Promise<BotConfig> {
  const loaded = await loadBotConfig({
    ...(values.config ? { configFile: values.config } : {}),
    ...(values['state-dir'] ? { stateDir: values['state-dir'] } : {}),
    env: io.env,
  });
  if (!loaded.ok) throw new ColloquyError('CONFIG_INVALID', formatIssues(loaded.issues));
  return loaded.config;
}

/** Keeps the server's stderr lines and the failures the source logs, as lines for the terminal. */
function probeLogger(lines: string[]): Logger {
  const keep = (obj: object | string, msg?: string) => {
    if (typeof obj === 'string') return lines.push(obj);
    const fields = obj as { stderr?: unknown; err?: unknown };
    if (typeof fields.stderr === 'string') lines.push(`stderr: ${fields.stderr}`);
    else if (msg) lines.push(fields.err ? `${msg}: ${String(fields.err)}` : msg);
  };
  const logger: Logger = {
    ...silentLogger,
    info: keep,
    warn: keep,
    error: keep,
    child: () => logger,
  };
  return logger;
}
