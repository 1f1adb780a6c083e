import { readFileSync } from 'node:fs';
import { type ColloquyError, isColloquyError } from '@colloquy/core';
import { type CliIo, processIo, writeLines } from './cli-io.js';
import { CLI } from './cli-name.js';

const CONNECT = '[--config file] [--state-dir dir] [--url ws://...] [--token t] [--json]';

/** Help text of each command, by the words that name it. */
const HELP: Record<string, string> = {
  start: `${CLI} start [--config file] [--state-dir dir] [--log-format auto|pretty|json] [--log-level level]
  Starts the bot: the web chat on http://127.0.0.1:7420, the gateway on ws://127.0.0.1:7421, and the
  channels the config or the environment turns on. Without a config file it uses the embedded default
  (or ./colloquy.json5 when present). Ctrl-C stops it cleanly.`,
  status: `${CLI} status ${CONNECT}
  Shows whether the bot answers, its web chat, model, channels, agents and sessions.`,
  sessions: `${CLI} sessions list [--kind k]... [--limit n] [--active minutes] [--archived] ${CONNECT}
${CLI} sessions history <key> [--limit n] [--tools] ${CONNECT}
${CLI} sessions status <key> [--changes-since n] ${CONNECT}
${CLI} sessions send <key> <message> [--timeout seconds] [--no-wait] [--deliver] ${CONNECT}
  Lists sessions, prints a transcript or a session's status (its stateVersion, and with
  --changes-since n what changed after version n, as counts), or sends a message into a session and
  prints the reply (--deliver also posts the reply to the session's chat). "main" is the default
  agent's main session.`,
  tree: `${CLI} tree <session> [--runs n] ${CONNECT}
  Prints the spawn tree below a session: each sub-agent under the session that spawned it, with its
  status, its runs' time and tokens, its tool calls and how its result reached its parent; a failed
  one is marked ✗ with its error. --runs n counts the newest n runs of each session (default 20).`,
  runs: `${CLI} runs <session> [--limit n] ${CONNECT}
  Lists a session's newest runs (default 20, at most 100), oldest first: status, start, duration,
  tokens in and out, tool calls, the announce to the parent, and the error of a failed one.`,
  config: `${CLI} config check [--config file] [--state-dir dir] [--json]
  Loads the config as start would (file, environment, every channel section) and explains each
  problem as "path: expected X, got Y". Exits 1 when there is one.`,
  init: `${CLI} init [--config file] [--force]
  Writes a commented JSON5 config (default ./colloquy.json5).`,
  pairing: `${CLI} pairing list [telegram|whatsapp] [--config file] [--state-dir dir] [--json]
${CLI} pairing approve <telegram|whatsapp> <code>
${CLI} pairing revoke telegram <userId> [--account id]
  Approves people who asked to talk to the bot (dmPolicy "pairing"), lists and revokes approvals.`,
  mcp: `${CLI} mcp serve [--agent id] [--name client] [--visibility v] ${CONNECT}
${CLI} mcp token create --name <client> [--agent id] [--scopes read,send,spawn] [--visibility self|tree|agent|all]
${CLI} mcp token list [--all] [--json]
${CLI} mcp token revoke <name|id>
  Lets MCP clients see, message and spawn sessions: over HTTP at /mcp on the gateway's port with a
  token from "mcp token create" (printed once), or over stdio with "mcp serve" (admin credentials).
${CLI} mcp list [--config file] [--state-dir dir] [--json]
${CLI} mcp probe <name> [--config file] [--state-dir dir] [--json]
  Lists the MCP servers of the config (mcp.servers) with their state in the running bot and their tools
  as the agents see them (<server>__<tool>), or starts one server here and lists its tools. An agent
  uses the tools its agents.list[].tools.allow names, e.g. ["github__*"].`,
};

/** Commands that need a sub-command (`sessions list`, `config check`, `pairing list`). */
const SUBCOMMANDS = new Set(['sessions', 'config', 'pairing', 'mcp']);

function usage(): string {
  return [
    'Colloquy: a multi-channel bot whose agents can see, message and spawn each other.',
    '',
    'Usage:',
    `  ${CLI} start                      start the bot`,
    `  ${CLI} status                     is it running? where? which model?`,
    `  ${CLI} sessions list|history|status|send  work with sessions over the gateway`,
    `  ${CLI} tree <session>             the sub-agents a session spawned, with their runs`,
    `  ${CLI} runs <session>             a session's runs with their durations`,
    `  ${CLI} config check               validate the config and explain errors`,
    `  ${CLI} init                       write a commented colloquy.json5`,
    `  ${CLI} pairing list|approve|revoke  approve people for direct chats`,
    `  ${CLI} mcp serve|token            serve the sessions to MCP clients`,
    `  ${CLI} mcp list|probe             the MCP servers whose tools the agents use`,
    '',
    `Run \`${CLI} <command> --help\` for the options of a command.`,
  ].join('\n');
}

/**
 * Runs the `colloquy` command line.
 *
 * @param argv - the arguments (without `node` and the script)
 * @param io - streams and environment (default the process's)
 * @returns the exit code
 * @example
 * ```ts
 * process.exitCode = await runCli(['sessions', 'list']);
 * ```
 */
export async function runCli(argv: readonly string[], io: CliIo = processIo): Promise<number> {
  const [command, ...args] = argv;
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    const topic = command === 'help' ? args[0] : undefined;
    writeLines(io.out, topic && HELP[topic] ? HELP[topic] : usage());
    return 0;
  }
  if (command === '--version' || command === '-v' || command === 'version') {
    writeLines(io.out, version());
    return 0;
  }
  if (args.includes('--help') || args.includes('-h')) {
    const text = HELP[command];
    writeLines(text ? io.out : io.err, text ?? usage());
    return text ? 0 : 1;
  }
  if (SUBCOMMANDS.has(command) && (args[0] === undefined || args[0].startsWith('-'))) {
    // `colloquy sessions` alone: the command's usage, not "Unknown sessions".
    writeLines(io.err, HELP[command]!);
    return 1;
  }
  try {
    switch (command) {
      // Each command is loaded on use, so `colloquy status` does not load what `start` needs.
      case 'start':
        return await (await import('./commands/start-command.js')).startCommand(args, io);
      case 'status':
        return await (await import('./commands/status-command.js')).statusCommand(args, io);
      case 'sessions':
        return await (await import('./commands/sessions-command.js')).sessionsCommand(args, io);
      case 'tree':
        return await (await import('./commands/tree-command.js')).treeCommand(args, io);
      case 'runs':
        return await (await import('./commands/tree-command.js')).runsCommand(args, io);
      case 'config':
        if (args[0] === 'check') {
          return await (await import('./commands/config-command.js')).configCheckCommand(args.slice(1), io);
        }
        writeLines(io.err, `Unknown "config ${args[0] ?? ''}". Use: ${CLI} config check`);
        return 1;
      case 'init':
        return await (await import('./commands/config-command.js')).initCommand(args, io);
      case 'pairing':
        return await (await import('./commands/pairing-command.js')).pairingCommand(args, io);
      case 'mcp':
        if (args[0] === 'list') {
          return await (await import('./commands/mcp-client-commands.js')).mcpListCommand(args.slice(1), io);
        }
        if (args[0] === 'probe') {
          return await (await import('./commands/mcp-client-commands.js')).mcpProbeCommand(args.slice(1), io);
        }
        if (args[0] === 'serve') {
          return await (await import('./commands/mcp-serve-command.js')).mcpServeCommand(args.slice(1), io);
        }
        if (args[0] === 'token') {
          return await (await import('./commands/mcp-token-command.js')).mcpTokenCommand(args.slice(1), io);
        }
        writeLines(io.err, `Unknown "mcp ${args[0]}".`, '', HELP.mcp!);
        return 2;
      default:
        writeLines(io.err, `Unknown command "${command}".`, '', usage());
        return 1;
    }
  } catch (error) {
    if (isColloquyError(error)) {
      writeLines(io.err, cliMessage(error));
      return 1;
    }
    throw error;
  }
}

/** What the CLI prints for a typed error: its message, or a plainer one where the library's names an option. */
function cliMessage(error: ColloquyError): string {
  const { reason } = error.details as { reason?: unknown };
  if (error.code === 'ABORTED' && reason === 'closed') {
    return 'The bot closed the connection: it stopped or restarted. Run the command again once it is back.';
  }
  return error.message;
}

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return `colloquy ${pkg.version}`;
}
