import { ColloquyError, isColloquyError } from '@colloquy/core';
import type { DatabaseAddress } from './database-url.js';

/** The SQLSTATE (or Node's errno code) of an error from `pg`, if any. */
export function pgCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EPIPE',
]);

/** True when the error means the database cannot be reached or the connection died. */
export function isConnectionError(error: unknown): boolean {
  const code = pgCode(error);
  if (code === undefined) {
    const message = (error as Error | null)?.message ?? '';
    // The client's own connect timeout ("timeout expired"), or a connection that ended: the server
    // is away or dropped it. (A wait in line for a busy pool is not one of these: see isPoolBusy.)
    return (
      message === 'timeout expired' ||
      /Connection terminated|connection timeout|Client has encountered a connection error/i.test(message)
    );
  }
  return (
    CONNECTION_CODES.has(code) ||
    code.startsWith('08') ||
    code === '57P01' ||
    code === '57P02' ||
    code === '57P03'
  );
}

/** What `pg-pool` says when a wait in line for a busy pool times out. */
const POOL_BUSY_MESSAGE = 'timeout exceeded when trying to connect';

/**
 * True when the call waited in line for a pooled connection until the pool's checkout timeout,
 * every connection staying busy: the server is there, but the store is overloaded. Nothing of the
 * call ran, and repeating it at once would only wait again.
 */
export function isPoolBusy(error: unknown): boolean {
  return (error as Error | null)?.message === POOL_BUSY_MESSAGE;
}

/**
 * Maps whatever `pg` threw onto `ColloquyError`: a `ColloquyError` passes through; connection
 * failures become `STORE_ERROR` naming host and port (never the password) with `details.retryable`
 * (the same call may succeed once the server is back); everything else becomes `STORE_ERROR` with
 * the SQLSTATE in `details`.
 */
export function toStoreError(error: unknown, address: DatabaseAddress): ColloquyError {
  if (isColloquyError(error)) return error;
  const code = pgCode(error);
  const where = `${address.host}:${address.port}`;
  const message = (error as Error | null)?.message ?? String(error);
  if (isPoolBusy(error)) {
    return new ColloquyError(
      'STORE_ERROR',
      `Every pooled connection to PostgreSQL at ${where} stayed busy until the store's checkout timeout; nothing of the call ran. The store is overloaded: raise maxConnections (and the server's max_connections) or checkoutTimeoutMs, or lower the load.`,
      { host: address.host, port: address.port, retryable: true, reason: 'pool-busy' },
      { cause: error },
    );
  }
  if (isConnectionError(error)) {
    return new ColloquyError(
      'STORE_ERROR',
      `The connection to PostgreSQL at ${where} failed or was lost (${message}); nothing of the interrupted call was committed. Check that the server runs and accepts connections there.`,
      { host: address.host, port: address.port, retryable: true, ...(code ? { pgCode: code } : {}) },
      { cause: error },
    );
  }
  return new ColloquyError(
    'STORE_ERROR',
    `PostgreSQL at ${where} refused a store operation: ${message}.`,
    { host: address.host, port: address.port, ...(code ? { pgCode: code } : {}) },
    { cause: error },
  );
}
