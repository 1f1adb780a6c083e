/**
 * One configured MCP server, shared by every session: started on first use, its tool list kept
 * current (`notifications/tools/list_changed`), restarted with backoff after it crashes, its stderr
 * sent to the log. Every failure comes back as a typed error, never as a call that waits forever.
 */
import { ColloquyError, type Logger } from '@colloquy/core';
import type { Redactor } from '@colloquy/core/internal';
import type { Client, StreamableHTTPClientTransport, Tool } from '@modelcontextprotocol/client';
import type { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { loadMcpSdk, type McpSdk } from './load-mcp-sdk.js';
import type { McpServerConfig } from './mcp-client-options.js';
import type { McpCallResultLike } from './mcp-result-text.js';

/** Where a server is in its life. */
export type McpServerState = 'idle' | 'starting' | 'ready' | 'restarting' | 'failed' | 'closed';

/** The settings one connection needs (the source's options with their defaults filled). */
export interface McpConnectionSettings {
  logger: Logger;
  redact: Redactor;
  clientName: string;
  clientVersion: string;
  callTimeoutMs: number;
  startTimeoutMs: number;
  maxMessageBytes: number;
  restartBackoffMs: { initial: number; max: number };
}

/** How many stderr lines are kept for the log entry of a failed start. */
const STDERR_TAIL = 10;

/**
 * A connection to one MCP server. `tools()` and `call()` start it when needed; a crash (the process
 * exits, the connection drops) schedules a restart after the current backoff delay.
 */
export class McpServerConnection {
  private client: Client | undefined;
  private sdk: McpSdk | undefined;
  private startup: Promise<Client> | undefined;
  private restartTimer: ReturnType<typeof setTimeout> | undefined;
  private failures = 0;
  private retryAt = 0;
  private listed: readonly Tool[] | undefined;
  private readonly stderrTail: string[] = [];
  private stateNow: McpServerState = 'idle';
  private errorNow: string | undefined;

  constructor(
    readonly name: string,
    private readonly config: McpServerConfig,
    private readonly settings: McpConnectionSettings,
  ) {}

  /** The server's state. */
  get state(): McpServerState {
    return this.stateNow;
  }

  /** Why the last start or call failed, when the server is not ready. */
  get lastError(): string | undefined {
    return this.errorNow;
  }

  /** The tools it listed last (kept through a restart), or undefined before its first start. */
  get knownTools(): readonly Tool[] | undefined {
    return this.listed;
  }

  /** The transport, for status lines. */
  get transport(): 'stdio' | 'http' {
    return 'command' in this.config ? 'stdio' : 'http';
  }

  /**
   * Starts the server if it is not running (and not waiting out a backoff delay) and returns its
   * tools.
   *
   * @returns the tools it lists
   * @throws `TOOL_ERROR` when it cannot be started (the message says why and when it is tried again)
   */
  async tools(): Promise<readonly Tool[]> {
    await this.ready();
    return this.listed ?? [];
  }

  /**
   * Calls one of its tools, bounded by the per-call timeout and the run's signal.
   *
   * @param tool - the tool name as the server lists it
   * @param args - the arguments
   * @param signal - the run's signal
   * @returns the server's result
   * @throws `TIMEOUT` when it did not answer in time; `TOOL_ERROR` when it could not be started, or
   *   crashed or dropped the connection during the call (a restart is then scheduled), or answered
   *   with a protocol error (`details.refused`, e.g. for a tool it no longer has); `ABORTED` when
   *   the run was stopped
   */
  async call(tool: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<McpCallResultLike> {
    const client = await this.ready();
    const timeoutMs = this.config.callTimeoutMs ?? this.settings.callTimeoutMs;
    try {
      const result = await client.callTool(
        { name: tool, arguments: args },
        { timeout: timeoutMs, ...(signal ? { signal } : {}) },
      );
      this.failures = 0;
      return result as McpCallResultLike;
    } catch (error) {
      if (signal?.aborted)
        throw new ColloquyError('ABORTED', 'The run was stopped during the call.', {}, { cause: error });
      const { SdkError, SdkErrorCode, ProtocolError } = (this.sdk as McpSdk).client;
      if (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout) {
        this.settings.logger.warn({ mcpServer: this.name, tool, timeoutMs }, 'an MCP tool call timed out');
        throw new ColloquyError(
          'TIMEOUT',
          `The MCP server "${this.name}" did not answer ${tool} within ${seconds(timeoutMs)} s, so the call was cancelled (mcp.servers.${this.name}.callTimeoutSeconds).`,
          { server: this.name, tool, timeoutMs },
          { cause: error },
        );
      }
      // An error the server answered with (JSON-RPC): the connection itself is fine.
      if (error instanceof ProtocolError) {
        throw new ColloquyError(
          'TOOL_ERROR',
          `The MCP server "${this.name}" refused the call to ${tool}: ${error.message}`,
          { server: this.name, tool, refused: true },
          { cause: error },
        );
      }
      this.crashed(client, error);
      throw new ColloquyError(
        'TOOL_ERROR',
        `The MCP server "${this.name}" stopped during the call to ${tool} (it crashed or dropped the connection). It is being restarted; the call may or may not have had an effect.`,
        { server: this.name, tool },
        { cause: error },
      );
    }
  }

  /**
   * Asks the server for its tool list again (after a call named a tool it no longer has).
   *
   * @returns the tools it lists now, or the known ones when it cannot be asked
   */
  async refreshTools(): Promise<readonly Tool[]> {
    const client = this.client;
    if (!client || this.stateNow !== 'ready') return this.listed ?? [];
    try {
      const { tools } = await client.listTools(undefined, {
        cacheMode: 'refresh',
        timeout: this.settings.startTimeoutMs,
      });
      this.setTools(tools);
    } catch (error) {
      this.settings.logger.warn(
        { mcpServer: this.name, err: error },
        'could not refresh the tools of an MCP server',
      );
    }
    return this.listed ?? [];
  }

  /** Stops the server (the process is ended, the connection closed) and any restart. Idempotent. */
  async close(): Promise<void> {
    this.stateNow = 'closed';
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    const client = this.client;
    this.client = undefined;
    await client?.close().catch(() => {});
  }

  // --- lifecycle ---

  private ready(): Promise<Client> {
    if (this.stateNow === 'closed') {
      return Promise.reject(new ColloquyError('TOOL_ERROR', `The MCP server "${this.name}" is shut down.`));
    }
    if (this.client && this.stateNow === 'ready') return Promise.resolve(this.client);
    if (this.startup) return this.startup;
    const wait = this.retryAt - performance.now();
    if (this.stateNow === 'failed' && wait > 0) {
      return Promise.reject(
        new ColloquyError(
          'TOOL_ERROR',
          `The MCP server "${this.name}" is unavailable: ${this.errorNow ?? 'it failed'}. It is tried again in ${seconds(wait)} s.`,
          { server: this.name, retryInMs: wait },
        ),
      );
    }
    return this.start();
  }

  private start(): Promise<Client> {
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    if (this.stateNow !== 'restarting') this.stateNow = 'starting';
    const startup = this.connect().then(
      (client) => {
        this.startup = undefined;
        if (this.stateNow === 'closed') {
          void client.close().catch(() => {});
          throw new ColloquyError('TOOL_ERROR', `The MCP server "${this.name}" is shut down.`);
        }
        this.client = client;
        this.stateNow = 'ready';
        this.errorNow = undefined;
        return client;
      },
      (error: unknown) => {
        this.startup = undefined;
        if (this.stateNow === 'closed') throw error;
        const delay = this.nextDelay();
        this.stateNow = 'failed';
        this.retryAt = performance.now() + delay;
        this.errorNow = `it failed to start (${describe(error)})`;
        this.settings.logger.error(
          { mcpServer: this.name, err: describe(error), stderr: this.stderrTail.slice(), retryInMs: delay },
          'an MCP server failed to start',
        );
        throw new ColloquyError(
          'TOOL_ERROR',
          `The MCP server "${this.name}" is unavailable: ${this.errorNow}. It is tried again in ${seconds(delay)} s.`,
          { server: this.name, retryInMs: delay },
          { cause: error },
        );
      },
    );
    this.startup = startup;
    return startup;
  }

  private async connect(): Promise<Client> {
    this.stderrTail.length = 0;
    this.sdk ??= await loadMcpSdk();
    const client = new this.sdk.client.Client(
      { name: this.settings.clientName, version: this.settings.clientVersion },
      {
        // Over HTTP the newest era lets a stateless server announce tool-list changes on a
        // subscription stream; over stdio the 2025 handshake needs no probe process.
        ...(this.transport === 'http' ? { versionNegotiation: { mode: 'auto' as const } } : {}),
        listChanged: {
          tools: {
            onChanged: (error, tools) => {
              if (error) {
                this.settings.logger.warn(
                  { mcpServer: this.name, err: describe(error) },
                  'could not refresh the tools of an MCP server',
                );
              } else if (tools) {
                this.settings.logger.info(
                  { mcpServer: this.name, tools: tools.length },
                  'an MCP server changed its tools',
                );
                this.setTools(tools);
              }
            },
          },
        },
      },
    );
    const timeout = this.settings.startTimeoutMs;
    const abort = AbortSignal.timeout(timeout);
    try {
      await client.connect(this.createTransport(this.sdk), { timeout, signal: abort });
      const { tools } = await client.listTools(undefined, { timeout, signal: abort });
      this.setTools(tools);
    } catch (error) {
      await client.close().catch(() => {});
      if (abort.aborted) throw new Error(`no answer within ${seconds(timeout)} s`, { cause: error });
      throw error;
    }
    client.onclose = () => {
      if (this.client === client && this.stateNow === 'ready')
        this.crashed(client, new Error('the connection closed'));
    };
    return client;
  }

  private createTransport(sdk: McpSdk): StdioClientTransport | StreamableHTTPClientTransport {
    const config = this.config;
    if ('command' in config) {
      const transport = new sdk.stdio.StdioClientTransport({
        command: config.command,
        args: [...(config.args ?? [])],
        env: { ...sdk.stdio.getDefaultEnvironment(), ...config.env },
        ...(config.cwd ? { cwd: config.cwd } : {}),
        stderr: 'pipe',
        maxBufferSize: this.settings.maxMessageBytes,
      });
      this.pipeStderr(transport);
      return transport;
    }
    const headers: Record<string, string> = { ...config.headers };
    if (config.bearerToken) headers.authorization = `Bearer ${config.bearerToken}`;
    return new sdk.client.StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers } });
  }

  /** Each stderr line of a stdio server goes to the log (redacted), the last few also to a failed start's entry. */
  private pipeStderr(transport: StdioClientTransport): void {
    let partial = '';
    transport.stderr?.on('data', (chunk: Buffer | string) => {
      const lines = (partial + chunk.toString()).split('\n');
      partial = lines.pop() ?? '';
      for (const raw of lines) {
        const line = this.settings.redact(raw.trimEnd()).text;
        if (!line) continue;
        this.stderrTail.push(line);
        if (this.stderrTail.length > STDERR_TAIL) this.stderrTail.shift();
        this.settings.logger.info({ mcpServer: this.name, stderr: line }, 'MCP server stderr');
      }
    });
  }

  /** The connection broke: forget the client and restart after the backoff delay. */
  private crashed(client: Client, error: unknown): void {
    if (this.client !== client || this.stateNow === 'closed') return;
    this.client = undefined;
    void client.close().catch(() => {});
    const delay = this.nextDelay();
    this.stateNow = 'restarting';
    this.errorNow = `it stopped (${describe(error)})`;
    this.settings.logger.error(
      { mcpServer: this.name, err: describe(error), stderr: this.stderrTail.slice(), restartInMs: delay },
      'an MCP server stopped; restarting it',
    );
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      if (this.stateNow === 'restarting') void this.start().catch(() => {});
    }, delay);
    this.restartTimer.unref?.();
  }

  private nextDelay(): number {
    const { initial, max } = this.settings.restartBackoffMs;
    const delay = Math.min(max, initial * 2 ** this.failures);
    this.failures += 1;
    return delay;
  }

  /** A new array each time: the source rebuilds its agent tools when the identity changes. */
  private setTools(tools: readonly Tool[]): void {
    this.listed = [...tools];
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function seconds(ms: number): string {
  return String(Math.max(1, Math.round(ms / 1000)));
}
