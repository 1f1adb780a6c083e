import { ColloquyError, resolveConfig, type SessionVisibility } from '@colloquy/core';
import { MCP_SCOPES } from '@colloquy/core/gateway';
import { defaultAgentId } from '@colloquy/core/internal';
import { serveMcpStdio } from '@colloquy/runtime/mcp';
import { type CliIo, writeLines } from '../cli-io.js';
import { CLI } from '../cli-name.js';
import { connectGateway } from '../connect.js';
import { GATEWAY_FLAGS, parseFlags } from '../parse-flags.js';
import { connectFlags } from './sessions-command.js';

const VISIBILITIES: readonly SessionVisibility[] = ['self', 'tree', 'agent', 'all'];

/** Usage of `colloquy mcp serve`. */
export const MCP_SERVE_USAGE = `Usage: ${CLI} mcp serve [--agent id] [--name client] [--visibility self|tree|agent|all] [--config file] [--state-dir dir] [--url ws://...] [--token t]`;

/**
 * `colloquy mcp serve`: the MCP tools over stdio, for a desktop or IDE host that starts it as a
 * child process. It connects to the running bot's gateway as the other commands do (with the
 * admin token), so it needs no MCP token and has every scope; it acts as the session
 * `agent:<agent>:mcp:<name>` (default `agent:<default agent>:mcp:stdio`). Stdout carries the
 * protocol only; messages go to stderr. Returns when the host closes stdin.
 *
 * @param args - arguments after `mcp serve`
 * @param io - streams and environment (stdin and stdout are the process's own)
 * @returns the exit code
 * @throws ColloquyError `INVALID_ARGUMENT` for a bad flag; the errors of `connectGateway`
 */
export async function mcpServeCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseFlags(
    args,
    { ...GATEWAY_FLAGS, agent: { type: 'string' }, name: { type: 'string' }, visibility: { type: 'string' } },
    'mcp serve',
  );
  const visibility = (values.visibility ?? 'tree') as SessionVisibility;
  if (!VISIBILITIES.includes(visibility)) {
    throw new ColloquyError(
      'INVALID_ARGUMENT',
      `--visibility must be one of ${VISIBILITIES.join(', ')}. ${MCP_SERVE_USAGE}`,
    );
  }
  const { client: gateway, config: botConfig, url } = await connectGateway(connectFlags(values), io);
  const config = botConfig?.core ?? resolveConfig({});
  const agentId = (values.agent ?? defaultAgentId(config)).trim().toLowerCase();
  const name = values.name ?? 'stdio';
  const closed = new Promise<void>((resolve) => {
    process.stdin.once('end', resolve);
    process.stdin.once('close', resolve);
  });
  const server = serveMcpStdio({
    gateway,
    config,
    client: { agentId, name, scopes: MCP_SCOPES, visibility },
    onError: (error) => writeLines(io.err, `${CLI} mcp serve: ${error.message}`),
  });
  writeLines(io.err, `${CLI} mcp serve: serving agent:${agentId}:mcp:${name} over stdio, through ${url}.`);
  await closed;
  await server.close();
  await gateway.close();
  return 0;
}
