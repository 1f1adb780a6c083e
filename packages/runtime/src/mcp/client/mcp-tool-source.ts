/**
 * The MCP tools of the agents: every configured server behind one source, which starts the servers
 * an agent's allow list can reach, offers their allowed tools as `<server>__<tool>` agent tools and
 * turns each failure into one clear tool error for the model and a log line for the owner.
 */
import {
  type AgentTool,
  ColloquyError,
  isColloquyError,
  type Logger,
  silentLogger,
  type ToolResult,
  toolResult,
} from '@colloquy/core';
import { createRedactor, isToolAllowed, type Redactor } from '@colloquy/core/internal';
import type { Tool } from '@modelcontextprotocol/client';
import type { McpToolSourceOptions } from './mcp-client-options.js';
import { mcpInputSchema } from './mcp-input-schema.js';
import { fitResultText, mcpResultText } from './mcp-result-text.js';
import { McpServerConnection, type McpServerState } from './mcp-server-connection.js';
import { exposedToolName, MCP_SERVER_NAME_PATTERN, serverReachable } from './mcp-tool-name.js';

/** What one server looks like from outside: for `colloquy mcp list` and the gateway. */
export interface McpServerStatus {
  /** The server name (`mcp.servers.<name>`). */
  name: string;
  /** `stdio` (a child process) or `http` (Streamable HTTP). */
  transport: 'stdio' | 'http';
  /** `idle` (not started yet), `starting`, `ready`, `restarting` (after a crash), `failed` or `closed`. */
  state: McpServerState;
  /** Why it is not ready, when it failed or crashed. */
  error?: string;
  /** Its tools as the model would see them (`<server>__<tool>`), from its last listing; empty before its first start. */
  tools: string[];
}

/** The MCP tools of one run, and what the model should know about servers it cannot use now. */
export interface McpToolSet {
  /** The allowed tools, named `<server>__<tool>`. */
  tools: AgentTool[];
  /** One sentence per allowed server that could not be started and has no known tools. */
  notices: string[];
}

/** The MCP servers of a runtime, as tools for its agents. */
export interface McpToolSource {
  /**
   * The tools a run may use: those every list in `allowLists` allows (the agent's
   * `agents.list[].tools.allow`; for a sub-agent spawned by another agent, that agent's list too).
   * Starts the servers the lists can reach, at most `startTimeoutMs` each, all at once.
   *
   * @param allowLists - allow lists of names and `*` patterns; no list, or an empty one, allows nothing
   * @returns the tools, and notices for servers that are unavailable
   */
  toolsFor(allowLists: readonly (readonly string[])[]): Promise<McpToolSet>;
  /** Every configured server with its state and last known tools; starts nothing. */
  servers(): McpServerStatus[];
  /**
   * Starts one server (when it is not running) and lists its tools.
   *
   * @param name - the server name
   * @returns its status after the start
   * @throws `INVALID_ARGUMENT` for a name that is not configured
   */
  probe(name: string): Promise<McpServerStatus>;
  /** Stops every server (ends the processes, closes the connections). Idempotent. */
  close(): Promise<void>;
}

/**
 * Creates the MCP tool source of a runtime from the configured servers. Nothing starts until a run
 * of an agent whose allow list reaches a server needs its tools; one connection per server is then
 * shared by every session.
 *
 * @param options - the servers, logger, redaction secrets, timeouts and limits
 * @returns the source; pass it to `createRuntime({ mcp })`
 * @throws `CONFIG_INVALID` for a server name the model could not tell from its tools (see `servers`)
 * @example
 * ```ts
 * const mcp = createMcpToolSource({ servers: { fs: { command: 'npx', args: ['-y', 'some-mcp-server'] } } });
 * const runtime = createRuntime({ config, store, mcp }); // agents with tools.allow ["fs__*"] see fs's tools
 * ```
 */
export function createMcpToolSource(options: McpToolSourceOptions): McpToolSource {
  const logger = options.logger ?? silentLogger;
  const redact = createRedactor(options.secrets);
  const maxResultChars = options.maxResultChars ?? 100_000;
  const settings = {
    logger,
    redact,
    clientName: options.clientName ?? 'colloquy',
    clientVersion: '1.0.0',
    callTimeoutMs: options.callTimeoutMs ?? 60_000,
    startTimeoutMs: options.startTimeoutMs ?? 30_000,
    maxMessageBytes: options.maxMessageBytes ?? 16 * 1024 * 1024,
    restartBackoffMs: options.restartBackoffMs ?? { initial: 1000, max: 60_000 },
  };
  const servers = new Map<string, ServerEntry>();
  for (const [name, config] of Object.entries(options.servers)) {
    if (!MCP_SERVER_NAME_PATTERN.test(name)) {
      throw new ColloquyError(
        'CONFIG_INVALID',
        `The MCP server name "${name}" is not usable: use lower-case letters, digits, "-" and single "_" (mcp.servers).`,
        { server: name },
      );
    }
    servers.set(name, {
      connection: new McpServerConnection(name, config, settings),
      tools: undefined,
      listing: undefined,
    });
  }

  const agentToolsOf = (entry: ServerEntry): AgentTool[] => {
    const listing = entry.connection.knownTools;
    if (!listing) return [];
    if (entry.tools && entry.listing === listing) return entry.tools;
    entry.listing = listing;
    entry.tools = buildAgentTools(entry.connection, listing, { logger, redact, maxResultChars });
    return entry.tools;
  };

  const statusOf = (entry: ServerEntry): McpServerStatus => {
    const { connection } = entry;
    return {
      name: connection.name,
      transport: connection.transport,
      state: connection.state,
      ...(connection.state !== 'ready' && connection.lastError ? { error: connection.lastError } : {}),
      tools: agentToolsOf(entry).map((tool) => tool.name),
    };
  };

  return {
    async toolsFor(allowLists) {
      if (allowLists.length === 0 || allowLists.some((list) => list.length === 0))
        return { tools: [], notices: [] };
      const reachable = [...servers.values()].filter((entry) =>
        allowLists.every((list) => serverReachable(entry.connection.name, list)),
      );
      const started = await Promise.allSettled(reachable.map((entry) => entry.connection.tools()));
      const tools: AgentTool[] = [];
      const notices: string[] = [];
      reachable.forEach((entry, index) => {
        const outcome = started[index]!;
        const offered = agentToolsOf(entry).filter((tool) =>
          allowLists.every((list) => isToolAllowed(tool.name, list)),
        );
        if (outcome.status === 'rejected' && offered.length === 0) {
          notices.push(redact(messageOf(outcome.reason)).text);
        }
        tools.push(...offered);
      });
      return { tools, notices };
    },
    servers: () => [...servers.values()].map(statusOf),
    async probe(name) {
      const entry = servers.get(name);
      if (!entry) {
        const known = [...servers.keys()].join(', ') || 'none';
        throw new ColloquyError(
          'INVALID_ARGUMENT',
          `No MCP server "${name}" is configured (mcp.servers: ${known}).`,
          {
            server: name,
          },
        );
      }
      await entry.connection.tools().catch(() => {});
      return statusOf(entry);
    },
    async close() {
      await Promise.all([...servers.values()].map((entry) => entry.connection.close()));
    },
  };
}

interface ServerEntry {
  connection: McpServerConnection;
  /** The agent tools built from `listing` (rebuilt when the server lists its tools anew). */
  tools: AgentTool[] | undefined;
  listing: readonly Tool[] | undefined;
}

interface BuildSettings {
  logger: Logger;
  redact: Redactor;
  maxResultChars: number;
}

/** The agent tools of one tool listing; names that are too long or taken twice are left out (and logged). */
function buildAgentTools(
  connection: McpServerConnection,
  listing: readonly Tool[],
  settings: BuildSettings,
): AgentTool[] {
  const tools: AgentTool[] = [];
  const taken = new Set<string>();
  for (const tool of listing) {
    const name = exposedToolName(connection.name, tool.name);
    if (name === undefined || taken.has(name)) {
      settings.logger.warn(
        { mcpServer: connection.name, tool: tool.name },
        name === undefined
          ? 'an MCP tool is left out: its name with the server prefix is longer than 64 characters'
          : `an MCP tool is left out: another tool of the server is also named ${name}`,
      );
      continue;
    }
    taken.add(name);
    tools.push({
      name,
      description:
        tool.description?.trim() ||
        tool.title ||
        `The tool ${tool.name} of the MCP server ${connection.name}.`,
      parameters: mcpInputSchema(tool.inputSchema as Record<string, unknown> | undefined),
      execute: (_id, args, signal) =>
        callTool(connection, tool.name, name, args as Record<string, unknown>, signal, settings),
    });
  }
  return tools;
}

/** One call, as the model reads it: the result text (cut and redacted), or one error sentence. */
async function callTool(
  connection: McpServerConnection,
  tool: string,
  exposed: string,
  args: Record<string, unknown>,
  signal: AbortSignal | undefined,
  settings: BuildSettings,
): Promise<ToolResult> {
  const { logger, redact, maxResultChars } = settings;
  try {
    const result = await connection.call(tool, args, signal);
    const text = mcpResultText(result);
    const fitted = fitResultText(text, maxResultChars, redact);
    if (fitted.truncated) {
      logger.warn(
        { mcpServer: connection.name, tool, chars: text.length, maxResultChars },
        'an MCP tool result was cut',
      );
    }
    if (result.isError) return errorResult(fitted.text);
    return {
      content: [{ type: 'text', text: fitted.text }],
      details: { server: connection.name, tool, truncated: fitted.truncated },
    };
  } catch (error) {
    if (isColloquyError(error) && error.code === 'ABORTED') throw error;
    if (isColloquyError(error) && error.details.refused === true) {
      const now = await connection.refreshTools();
      if (!now.some((listed) => listed.name === tool)) {
        logger.warn({ mcpServer: connection.name, tool }, 'a called MCP tool is no longer offered');
        return errorResult(
          `${exposed} is no longer offered: the MCP server "${connection.name}" changed its tool list. Its tools now: ${
            now
              .map((listed) => exposedToolName(connection.name, listed.name))
              .filter(Boolean)
              .join(', ') || 'none'
          }.`,
          redact,
        );
      }
      logger.warn(
        { mcpServer: connection.name, tool, err: error.message },
        'an MCP server refused a tool call',
      );
      return errorResult(error.message, redact);
    }
    return errorResult(messageOf(error), redact);
  }
}

function errorResult(message: string, redact?: Redactor): ToolResult {
  return toolResult({ status: 'error', error: redact ? redact(message).text : message }, true);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
