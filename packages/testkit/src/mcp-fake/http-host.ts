/**
 * The fake MCP server over Streamable HTTP on 127.0.0.1: the SDK's stateless handler (a server
 * instance per request) behind a small `node:http` bridge. Tool-list changes are published to the
 * clients' open subscription streams.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Readable } from 'node:stream';
import { createMcpHandler, type McpHttpHandler } from '@modelcontextprotocol/server';
import { type FakeMcpCall, type FakeMcpTool, FakeMcpToolBook } from './fake-mcp-tools.js';

/** Options of {@link startFakeMcpHttpServer}. */
export interface FakeMcpHttpServerOptions {
  /** The server name it reports. Default `fake-mcp`. */
  name?: string;
  /** Tools served besides the built-in ones (`echo`, `crash`, `hang`, `big`, `fail`, `add_tool`, `remove_tool`). */
  tools?: readonly FakeMcpTool[];
  /** The port. Default: an ephemeral one. */
  port?: number;
  /** When set, every request must carry `Authorization: Bearer <token>` (else 401). */
  bearerToken?: string;
}

/** A running fake MCP server over Streamable HTTP. */
export interface FakeMcpHttpServer {
  /** The MCP endpoint, `http://127.0.0.1:<port>/mcp`. */
  readonly url: string;
  /** Every tool call served, oldest first. */
  readonly calls: readonly FakeMcpCall[];
  /** The request headers of every HTTP request, oldest first (to check configured headers). */
  readonly requestHeaders: readonly Record<string, string | string[] | undefined>[];
  /** Adds (or replaces) a tool and publishes `notifications/tools/list_changed`. */
  addTool(tool: FakeMcpTool): void;
  /** Removes a tool and publishes `notifications/tools/list_changed`. */
  removeTool(name: string): void;
  /** The names of the tools served now. */
  toolNames(): string[];
  /** Drops every open connection, as a crashed server would (it keeps listening, like one restarted at once). */
  dropConnections(): void;
  /** Stops listening and drops every connection. */
  close(): Promise<void>;
}

/**
 * Starts the fake MCP server over Streamable HTTP on 127.0.0.1, built with the official SDK's
 * server. Its `crash` tool drops every connection mid-call, `hang` never answers, `big` returns
 * 10 MiB, and `add_tool` / `remove_tool` change the tool list (announced to subscribed clients).
 *
 * @param options - name, extra tools, port, required bearer token
 * @returns the running server
 * @example
 * ```ts
 * const mcp = await startFakeMcpHttpServer({ tools: [{ name: 'weather', run: () => ({ text: 'sunny' }) }] });
 * // config: mcp.servers.fake = { url: mcp.url }
 * expect(mcp.calls.map((c) => c.tool)).toEqual(['weather']);
 * await mcp.close();
 * ```
 */
export async function startFakeMcpHttpServer(
  options: FakeMcpHttpServerOptions = {},
): Promise<FakeMcpHttpServer> {
  const sockets = new Set<Socket>();
  const dropConnections = () => {
    for (const socket of sockets) socket.destroy();
  };
  const book = new FakeMcpToolBook(options.name ?? 'fake-mcp', dropConnections, options.tools);
  const handler = createMcpHandler(() => book.buildServer());
  book.onChange(() => handler.notify.toolsChanged());
  const requestHeaders: FakeMcpHttpServer['requestHeaders'][number][] = [];

  const server = createServer((req, res) => {
    requestHeaders.push({ ...req.headers });
    if (options.bearerToken !== undefined && req.headers.authorization !== `Bearer ${options.bearerToken}`) {
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"invalid_token"}');
      return;
    }
    if (new URL(req.url ?? '/', 'http://127.0.0.1').pathname !== '/mcp') {
      res.writeHead(404).end();
      return;
    }
    serveThroughHandler(handler, req, res).catch(() => res.destroy());
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    calls: book.calls,
    requestHeaders,
    addTool: (tool) => book.addTool(tool),
    removeTool: (name) => book.removeTool(name),
    toolNames: () => book.toolNames(),
    dropConnections,
    async close() {
      dropConnections();
      await handler.close().catch(() => {});
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Hands one Node request to the web-standard handler and streams its response back. */
async function serveThroughHandler(
  handler: McpHttpHandler,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const abort = new AbortController();
  res.on('close', () => abort.abort());
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === 'string') headers.set(name, value);
    else if (Array.isArray(value)) for (const item of value) headers.append(name, item);
  }
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  const request = new Request(`http://127.0.0.1${req.url ?? '/'}`, {
    method: req.method ?? 'GET',
    headers,
    signal: abort.signal,
    ...(hasBody ? { body: Readable.toWeb(req) as ReadableStream<Uint8Array>, duplex: 'half' } : {}),
  } as RequestInit);
  const response = await handler.fetch(request);
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (!response.body) {
    res.end();
    return;
  }
  const body = Readable.fromWeb(response.body as import('node:stream/web').ReadableStream<Uint8Array>);
  abort.signal.addEventListener('abort', () => body.destroy(), { once: true });
  body.on('error', () => res.destroy());
  body.pipe(res);
}
