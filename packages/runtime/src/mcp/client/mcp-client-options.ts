import type { Logger } from '@colloquy/core';

/** An MCP server the runtime starts as a child process and talks to over stdin/stdout. */
export interface McpStdioServerConfig {
  /** The program to run, e.g. `npx` or `node`. */
  command: string;
  /** Its arguments. Default none. */
  args?: readonly string[];
  /**
   * Environment variables for it, over the SDK's safe default set (`HOME`, `PATH`, `USER`, ...):
   * the bot's own environment is not passed on. Default none.
   */
  env?: Readonly<Record<string, string>>;
  /** Its working directory. Default: the bot's. */
  cwd?: string;
}

/** An MCP server the runtime reaches over Streamable HTTP. */
export interface McpHttpServerConfig {
  /** The MCP endpoint, e.g. `https://mcp.example.com/mcp`. */
  url: string;
  /** Extra request headers. Default none. */
  headers?: Readonly<Record<string, string>>;
  /** Sent as `Authorization: Bearer <token>` with every request. Default none. */
  bearerToken?: string;
}

/** One MCP server: stdio (`command`) or Streamable HTTP (`url`), with optional limits of its own. */
export type McpServerConfig = (McpStdioServerConfig | McpHttpServerConfig) & {
  /** How long one tool call may take before the model is told it timed out. Default: the source's `callTimeoutMs`. */
  callTimeoutMs?: number;
};

/** Options of `createMcpToolSource`. */
export interface McpToolSourceOptions {
  /**
   * The servers by name. A name is lower-case letters, digits, `-` and single `_` (no `__`): the
   * model sees each tool as `<server>__<tool>`.
   */
  servers: Readonly<Record<string, McpServerConfig>>;
  /** Where server failures, restarts, tool-list changes and each server's stderr go. Default silent. */
  logger?: Logger;
  /** Exact secret values redacted from tool results, besides the built-in patterns (`config.redaction.secrets`). */
  secrets?: readonly string[];
  /** How long one tool call may take, in milliseconds. Default 60,000. */
  callTimeoutMs?: number;
  /** How long starting a server (spawn or connect, handshake, tool list) may take. Default 30,000 ms. */
  startTimeoutMs?: number;
  /** A result longer than this many characters is cut, with a notice to the model. Default 100,000. */
  maxResultChars?: number;
  /**
   * The largest message read from a stdio server, in bytes; a larger one ends the connection.
   * Default 16 MiB (a 10 MiB result still arrives, to be cut to `maxResultChars`).
   */
  maxMessageBytes?: number;
  /** Restart delays after a crash or a failed start: the first, doubled each time up to the most. Default 1,000 and 60,000 ms. */
  restartBackoffMs?: { initial: number; max: number };
  /** The client name servers see. Default `colloquy`. */
  clientName?: string;
}
