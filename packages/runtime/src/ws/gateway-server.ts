import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { ColloquyError, type Gateway, type Logger, silentLogger } from '@colloquy/core';
import type { GatewayEvent, GatewayMethod } from '@colloquy/core/gateway';
import { type RawData, type WebSocket, WebSocketServer } from 'ws';
import { isGatewayMethod } from '../gateway/method-names.js';
import { CLOSE_CODES, type FrameId, parseRequestFrame, type ResponseFrame, toErrorBody } from './frames.js';

/** Options of {@link startGatewayServer}. */
export interface GatewayServerOptions {
  /** The gateway to serve (the runtime's in-process gateway). */
  gateway: Gateway;
  /** The shared secret clients present (`Authorization: Bearer <token>` or an `auth` frame). Required. */
  token: string;
  /** Interface to bind. Default `127.0.0.1` (loopback only). */
  host?: string;
  /** Port; 0 picks a free one. Default 7421. */
  port?: number;
  /** Largest accepted frame in bytes; larger frames close the connection with 1009. Default 1 MiB. */
  maxFrameBytes?: number;
  /** How long an unauthenticated connection may stay open without an `auth` frame. Default 10 s. */
  authTimeoutMs?: number;
  /** Ping interval; a connection that misses a pong is dropped. Default 30 s. */
  heartbeatMs?: number;
  /** Events are dropped for a connection whose send buffer holds more than this. Default 8 MiB. */
  maxBufferedBytes?: number;
  /** Receives connection logs. Default: silent. */
  logger?: Logger;
  /**
   * Plain HTTP routes served beside the WebSocket, by exact path (e.g. `/mcp`); each answers its
   * own requests (and does its own authentication). Other paths get `426 Upgrade Required`.
   */
  routes?: Readonly<Record<string, (req: IncomingMessage, res: ServerResponse) => void>>;
}

/** A running gateway server. */
export interface GatewayServer {
  /** `ws://host:port`. */
  readonly url: string;
  /** The interface bound. */
  readonly host: string;
  /** The port bound (the one picked when `port` was 0). */
  readonly port: number;
  /** Open connections (authenticated or not). */
  connectionCount(): number;
  /** Closes every connection (code 1001) and the listening socket. Idempotent. */
  close(): Promise<void>;
}

interface Connection {
  socket: WebSocket;
  authed: boolean;
  alive: boolean;
  unsubscribe?: () => void;
  sessionKeys?: ReadonlySet<string>;
  authTimer?: NodeJS.Timeout;
}

/**
 * Serves a `Gateway` (`@colloquy/core`) over WebSocket: JSON request/response frames with ids, server-pushed
 * events after `subscribe`, token authentication. The protocol is documented in the README.
 *
 * @param options - the gateway, the token and where to listen
 * @returns the server, once it listens
 * @throws `CONFIG_INVALID` when `token` is empty; `INTERNAL` when the port cannot be bound
 * @example
 * ```ts
 * const server = await startGatewayServer({ gateway: runtime.gateway, token: process.env.COLLOQUY_TOKEN!, port: 0 });
 * console.log(server.url); // ws://127.0.0.1:54321
 * ```
 */
export async function startGatewayServer(options: GatewayServerOptions): Promise<GatewayServer> {
  if (!options.token) {
    throw new ColloquyError(
      'CONFIG_INVALID',
      'The gateway server needs a token: set gateway.token in the config (clients send it as a Bearer token).',
      { path: 'gateway.token' },
    );
  }
  const log = (options.logger ?? silentLogger).child({ component: 'gateway-ws' });
  const gateway = options.gateway;
  const expected = Buffer.from(options.token, 'utf8');
  const authTimeoutMs = options.authTimeoutMs ?? 10_000;
  const maxBuffered = options.maxBufferedBytes ?? 8 * 1024 * 1024;
  const connections = new Set<Connection>();

  const tokenMatches = (given: string): boolean => {
    const actual = Buffer.from(given, 'utf8');
    return actual.length === expected.length && timingSafeEqual(actual, expected);
  };

  const routes = options.routes ?? {};
  const http: Server = createServer((req, res) => {
    const route = Object.hasOwn(routes, pathOf(req)) ? routes[pathOf(req)] : undefined;
    if (route) {
      route(req, res);
      return;
    }
    res.writeHead(426, { 'content-type': 'text/plain' });
    res.end('This is the Colloquy gateway: connect with a WebSocket client.\n');
  });
  const wss = new WebSocketServer({ noServer: true, maxPayload: options.maxFrameBytes ?? 1024 * 1024 });

  http.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const bearer = readBearer(req);
    if (bearer !== undefined && !tokenMatches(bearer)) {
      socket.end('HTTP/1.1 401 Unauthorized\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => accept(ws, bearer !== undefined));
  });

  function accept(socket: WebSocket, authed: boolean): void {
    const conn: Connection = { socket, authed, alive: true };
    connections.add(conn);
    if (!authed) {
      conn.authTimer = setTimeout(() => {
        socket.close(CLOSE_CODES.authTimeout, 'authentication timeout: send an auth frame first');
      }, authTimeoutMs);
      conn.authTimer.unref();
    }
    socket.on('pong', () => {
      conn.alive = true;
    });
    socket.on('message', (data: RawData, isBinary: boolean) => {
      void onFrame(conn, data, isBinary);
    });
    socket.on('close', () => {
      connections.delete(conn);
      if (conn.authTimer) clearTimeout(conn.authTimer);
      conn.unsubscribe?.();
    });
    socket.on('error', (error) => {
      log.debug({ err: error }, 'gateway connection error');
    });
  }

  function send(conn: Connection, frame: ResponseFrame): void {
    if (conn.socket.readyState === conn.socket.OPEN) conn.socket.send(JSON.stringify(frame));
  }

  function refuse(conn: Connection, id: FrameId | null, message: string): void {
    send(conn, { id, ok: false, error: { code: 'UNAUTHORIZED', message, details: {} } });
    conn.socket.close(CLOSE_CODES.unauthorized, 'unauthorized');
  }

  async function onFrame(conn: Connection, data: RawData, isBinary: boolean): Promise<void> {
    if (isBinary) {
      send(conn, {
        id: null,
        ok: false,
        error: {
          code: 'INVALID_ARGUMENT',
          message: 'Send text frames with JSON, not binary frames.',
          details: {},
        },
      });
      return;
    }
    const parsed = parseRequestFrame(rawToString(data));
    if (!conn.authed) {
      const frame = parsed.ok ? parsed.frame : undefined;
      const token = frame?.method === 'auth' ? frame.params.token : undefined;
      if (typeof token === 'string' && tokenMatches(token)) {
        conn.authed = true;
        if (conn.authTimer) clearTimeout(conn.authTimer);
        send(conn, { id: frame!.id, ok: true, result: { authenticated: true } });
        return;
      }
      refuse(
        conn,
        parsed.ok ? parsed.frame.id : parsed.id,
        frame?.method === 'auth'
          ? 'Wrong token. Use the gateway.token from the server config.'
          : 'Authenticate first: send {"id":1,"method":"auth","params":{"token":"..."}} or connect with "Authorization: Bearer <token>".',
      );
      return;
    }
    if (!parsed.ok) {
      send(conn, { id: parsed.id, ok: false, error: toErrorBody(parsed.error) });
      return;
    }
    const { id, method, params } = parsed.frame;
    try {
      const result = await dispatch(conn, method, params);
      send(conn, { id, ok: true, result });
    } catch (error) {
      send(conn, { id, ok: false, error: toErrorBody(error) });
    }
  }

  async function dispatch(
    conn: Connection,
    method: string,
    params: Record<string, unknown>,
  ): Promise<unknown> {
    switch (method) {
      case 'auth':
        return { authenticated: true };
      case 'subscribe':
        return subscribe(conn, params);
      case 'unsubscribe':
        conn.unsubscribe?.();
        conn.unsubscribe = undefined;
        return { subscribed: false };
      default:
        if (!isGatewayMethod(method)) {
          throw new ColloquyError(
            'NOT_SUPPORTED',
            `Unknown method "${method}". Methods: auth, subscribe, unsubscribe and the gateway methods (sessions.list, agent, agent.wait, ...).`,
            { method },
          );
        }
        // The gateway validates params itself; the wire cannot carry stronger types than JSON.
        return gateway.call(method as GatewayMethod, params as never);
    }
  }

  function subscribe(conn: Connection, params: Record<string, unknown>): { subscribed: true } {
    if (!gateway.subscribe) {
      throw new ColloquyError('NOT_SUPPORTED', 'This gateway does not publish events.');
    }
    const keys = params.sessionKeys;
    if (keys !== undefined && !(Array.isArray(keys) && keys.every((k) => typeof k === 'string'))) {
      throw new ColloquyError(
        'INVALID_ARGUMENT',
        'subscribe: "sessionKeys" must be an array of session keys.',
      );
    }
    conn.sessionKeys = keys ? new Set(keys as string[]) : undefined;
    if (!conn.unsubscribe) {
      conn.unsubscribe = gateway.subscribe((event: GatewayEvent) => {
        if (conn.sessionKeys && !conn.sessionKeys.has(event.sessionKey)) return;
        const socket = conn.socket;
        if (socket.readyState !== socket.OPEN) return;
        if (socket.bufferedAmount > maxBuffered) {
          log.warn({ type: event.type }, 'gateway client is not reading: event dropped');
          return;
        }
        socket.send(JSON.stringify({ event }));
      });
    }
    return { subscribed: true };
  }

  const heartbeat = setInterval(() => {
    for (const conn of connections) {
      if (!conn.alive) {
        conn.socket.terminate();
        continue;
      }
      conn.alive = false;
      conn.socket.ping();
    }
  }, options.heartbeatMs ?? 30_000);
  heartbeat.unref();

  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    const onError = (error: Error) => {
      reject(
        new ColloquyError(
          'INTERNAL',
          `The gateway server could not listen on ${host}:${options.port ?? 7421}: ${error.message}. Set gateway.port to a free port.`,
          { host, port: options.port ?? 7421 },
          { cause: error },
        ),
      );
    };
    http.once('error', onError);
    http.listen(options.port ?? 7421, host, () => {
      http.off('error', onError);
      resolve();
    });
  }).catch((error: unknown) => {
    clearInterval(heartbeat);
    throw error;
  });
  const port = (http.address() as AddressInfo).port;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  log.info({ host, port }, 'gateway server listening');

  let closing: Promise<void> | undefined;
  return {
    url: `ws://${urlHost}:${port}`,
    host,
    port,
    connectionCount: () => connections.size,
    close() {
      closing ??= (async () => {
        clearInterval(heartbeat);
        for (const conn of connections) conn.socket.close(1001, 'server shutting down');
        const stragglers = setTimeout(() => {
          for (const conn of connections) conn.socket.terminate();
        }, 1000);
        stragglers.unref();
        await new Promise<void>((resolve) => wss.close(() => resolve()));
        http.closeAllConnections?.();
        await new Promise<void>((resolve) => http.close(() => resolve()));
        clearTimeout(stragglers);
      })();
      return closing;
    },
  };
}

function pathOf(req: IncomingMessage): string {
  const url = req.url ?? '/';
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

function readBearer(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  if (!header) return undefined;
  const match = /^Bearer\s+(.+)$/i.exec(header.trim());
  return match ? match[1]!.trim() : '';
}

function rawToString(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString('utf8');
  return data.toString('utf8');
}
