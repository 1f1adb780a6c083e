import { backoffDelay, ColloquyError, type Gateway, type Logger, silentLogger } from '@colloquy/core';
import type { GatewayEvent, GatewayMethod, GatewayParams, GatewayResult } from '@colloquy/core/gateway';
import WebSocket, { type RawData } from 'ws';
import { RETRYABLE_METHODS } from '../gateway/method-names.js';
import { CLOSE_CODES, fromErrorBody } from './frames.js';

/** Reconnect backoff of {@link createGatewayClient}: each delay is 50 to 100 % of the grown one. */
export interface ReconnectOptions {
  /** First delay after a lost connection. Default 200 ms. */
  initialDelayMs?: number;
  /** Upper bound of the delay. Default 5 s. */
  maxDelayMs?: number;
  /** Growth per failed attempt. Default 2. */
  factor?: number;
}

/** Options of {@link createGatewayClient}. */
export interface GatewayClientOptions {
  /** The server URL, e.g. `ws://127.0.0.1:7421`. */
  url: string;
  /** The gateway token (sent as `Authorization: Bearer <token>`). */
  token: string;
  /** Reconnect with backoff after a lost connection (default on); `false` to fail instead. */
  reconnect?: ReconnectOptions | false;
  /** Calls other than `agent.wait` fail with `TIMEOUT` after this long. Default 30 s. */
  requestTimeoutMs?: number;
  /** Receives connection and protocol logs. Default: silent. */
  logger?: Logger;
}

/** The connection state of a {@link GatewayClient}. */
export type GatewayClientState = 'connecting' | 'open' | 'reconnecting' | 'closed';

/** A typed gateway client: the same `Gateway` (`@colloquy/core`) surface as in-process, over WebSocket. */
export interface GatewayClient extends Gateway {
  /**
   * Subscribes to gateway events (the first listener subscribes the connection); returns the unsubscribe function.
   */
  subscribe(listener: (event: GatewayEvent) => void): () => void;
  /** Resolves once connected (and authenticated). @throws `UNAUTHORIZED` when the token is refused */
  ready(): Promise<void>;
  /** The connection state. */
  readonly state: GatewayClientState;
  /** Closes the connection for good; pending calls fail with `ABORTED`. */
  close(): Promise<void>;
}

interface Pending {
  id: number;
  method: GatewayMethod | 'subscribe';
  params: Record<string, unknown>;
  resolve(value: unknown): void;
  reject(error: ColloquyError): void;
  /** Sent on the current connection. */
  sent: boolean;
  /** For `agent.wait`: when the caller's wait ends (`performance.now()` ms, unmoved by wall-clock jumps). */
  waitDeadline?: number;
  timer?: NodeJS.Timeout;
}

/**
 * Connects to a gateway server and returns a `Gateway` (`@colloquy/core`) that calls it. The client reconnects
 * with backoff, re-subscribes its event listeners, and re-issues calls that are safe to repeat
 * (reads, and `agent.wait` with the remaining wait time, so a wait survives a reconnect). Other
 * calls in flight when the connection drops fail with `ABORTED` (their effect is unknown).
 *
 * @param options - URL, token, backoff and timeouts
 * @returns the client (already connecting)
 * @example
 * ```ts
 * const client = createGatewayClient({ url: 'ws://127.0.0.1:7421', token });
 * const { runId } = await client.call('agent', { sessionKey: 'main', message: 'hi' });
 * const result = await client.call('agent.wait', { runId, timeoutMs: 30_000 });
 * await client.close();
 * ```
 */
export function createGatewayClient(options: GatewayClientOptions): GatewayClient {
  const log = (options.logger ?? silentLogger).child({ component: 'gateway-client' });
  const backoff = options.reconnect === false ? undefined : (options.reconnect ?? {});
  const requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
  const pending = new Map<number, Pending>();
  const listeners = new Set<(event: GatewayEvent) => void>();
  let socket: WebSocket | undefined;
  let state: GatewayClientState = 'connecting';
  let nextId = 1;
  let attempt = 0;
  let reconnectTimer: NodeJS.Timeout | undefined;
  let fatal: ColloquyError | undefined;
  const readyWaiters: { resolve(): void; reject(e: ColloquyError): void }[] = [];

  function connect(): void {
    const ws = new WebSocket(options.url, { headers: { authorization: `Bearer ${options.token}` } });
    socket = ws;
    ws.on('open', () => {
      attempt = 0;
      state = 'open';
      for (const waiter of readyWaiters.splice(0)) waiter.resolve();
      if (listeners.size > 0) sendControl('subscribe', {});
      for (const p of pending.values()) if (!p.sent) transmit(p);
    });
    ws.on('message', (data: RawData) => onMessage(data));
    ws.on('unexpected-response', (_req, res) => {
      if (res.statusCode === 401) {
        fail(new ColloquyError('UNAUTHORIZED', 'The gateway refused the token. Check gateway.token.'));
      }
      ws.terminate();
    });
    ws.on('close', (code: number) => onClose(ws, code));
    ws.on('error', (error) => log.debug({ err: error }, 'gateway connection error'));
  }

  function onMessage(data: RawData): void {
    let frame: unknown;
    try {
      frame = JSON.parse(data.toString());
    } catch {
      log.warn('gateway sent a frame that is not JSON');
      return;
    }
    if (typeof frame !== 'object' || frame === null) return;
    const f = frame as { id?: unknown; ok?: unknown; result?: unknown; error?: unknown; event?: unknown };
    if (f.event !== undefined) {
      for (const listener of listeners) {
        try {
          listener(f.event as GatewayEvent);
        } catch (error) {
          log.warn({ err: error }, 'gateway event listener threw');
        }
      }
      return;
    }
    if (typeof f.id !== 'number') return;
    const p = pending.get(f.id);
    if (!p) return;
    settle(p);
    if (f.ok === true) p.resolve(f.result);
    else p.reject(fromErrorBody(f.error));
  }

  function onClose(ws: WebSocket, code: number): void {
    if (socket !== ws) return;
    socket = undefined;
    if (code === CLOSE_CODES.unauthorized) {
      fail(new ColloquyError('UNAUTHORIZED', 'The gateway refused the token. Check gateway.token.'));
    }
    if (state === 'closed') return;
    for (const p of [...pending.values()]) {
      if (!p.sent) continue;
      p.sent = false;
      if (!isRetryable(p)) {
        settle(p);
        p.reject(
          new ColloquyError(
            'ABORTED',
            `The gateway connection dropped before ${p.method} answered; it may or may not have taken effect. Check with session.status or chat.history before retrying.`,
            { method: p.method, reason: 'disconnected' },
          ),
        );
      }
    }
    if (!backoff) {
      fail(
        new ColloquyError(
          'ABORTED',
          `The gateway closed the connection (WebSocket code ${code}): the server stopped or restarted. This client was made without the reconnect option, so it stays closed.`,
          { code, reason: 'closed' },
        ),
      );
      return;
    }
    state = 'reconnecting';
    const delayMs = backoffDelay(attempt, {
      initialDelayMs: backoff.initialDelayMs ?? 200,
      maxDelayMs: backoff.maxDelayMs ?? 5000,
      factor: backoff.factor ?? 2,
      jitter: 0.5,
    });
    attempt++;
    log.debug({ code, delayMs }, 'gateway connection lost; reconnecting');
    reconnectTimer = setTimeout(connect, delayMs);
  }

  function isRetryable(p: Pending): boolean {
    if (p.method === 'subscribe') return false;
    if (RETRYABLE_METHODS.has(p.method)) return true;
    return p.method === 'agent' && typeof p.params.idempotencyKey === 'string';
  }

  function fail(error: ColloquyError): void {
    if (state === 'closed') return;
    fatal = error;
    state = 'closed';
    if (reconnectTimer) clearTimeout(reconnectTimer);
    for (const waiter of readyWaiters.splice(0)) waiter.reject(error);
    for (const p of [...pending.values()]) {
      settle(p);
      p.reject(error);
    }
    socket?.terminate();
    socket = undefined;
  }

  function settle(p: Pending): void {
    pending.delete(p.id);
    if (p.timer) clearTimeout(p.timer);
  }

  function transmit(p: Pending): void {
    if (!socket || socket.readyState !== WebSocket.OPEN) return;
    let params = p.params;
    if (p.waitDeadline !== undefined) {
      params = { ...params, timeoutMs: Math.max(0, p.waitDeadline - performance.now()) };
    }
    socket.send(JSON.stringify({ id: p.id, method: p.method, params }));
    p.sent = true;
  }

  function sendControl(method: 'subscribe', params: Record<string, unknown>): void {
    const p: Pending = {
      id: nextId++,
      method,
      params,
      sent: false,
      resolve: () => {},
      reject: (error) => log.warn({ err: error }, 'gateway subscribe failed'),
    };
    pending.set(p.id, p);
    transmit(p);
    if (!p.sent) pending.delete(p.id);
  }

  function request(method: GatewayMethod, params: Record<string, unknown>): Promise<unknown> {
    if (fatal) return Promise.reject(fatal);
    return new Promise((resolve, reject) => {
      const p: Pending = { id: nextId++, method, params, resolve, reject, sent: false };
      let timeoutMs = requestTimeoutMs;
      if (method === 'agent.wait') {
        const waitMs = typeof params.timeoutMs === 'number' && params.timeoutMs > 0 ? params.timeoutMs : 0;
        p.waitDeadline = performance.now() + waitMs;
        timeoutMs = waitMs + requestTimeoutMs;
      }
      p.timer = setTimeout(() => {
        settle(p);
        reject(
          new ColloquyError('TIMEOUT', `The gateway did not answer ${method} within ${timeoutMs} ms.`, {
            method,
            state,
          }),
        );
      }, timeoutMs);
      p.timer.unref?.();
      pending.set(p.id, p);
      transmit(p);
    });
  }

  connect();

  return {
    get state() {
      return state;
    },

    call<M extends GatewayMethod>(method: M, params: GatewayParams<M>): Promise<GatewayResult<M>> {
      return request(method, (params ?? {}) as Record<string, unknown>) as Promise<GatewayResult<M>>;
    },

    subscribe(listener) {
      listeners.add(listener);
      if (listeners.size === 1 && state === 'open') sendControl('subscribe', {});
      return () => {
        listeners.delete(listener);
      };
    },

    ready() {
      if (fatal) return Promise.reject(fatal);
      if (state === 'open') return Promise.resolve();
      return new Promise<void>((resolve, reject) => readyWaiters.push({ resolve, reject }));
    },

    async close() {
      if (state === 'closed' && !socket) return;
      const ws = socket;
      fail(new ColloquyError('ABORTED', 'The gateway client was closed.', { reason: 'closed' }));
      if (ws && ws.readyState !== WebSocket.CLOSED) {
        await new Promise<void>((resolve) => {
          ws.once('close', () => resolve());
          ws.terminate();
        });
      }
    },
  };
}
