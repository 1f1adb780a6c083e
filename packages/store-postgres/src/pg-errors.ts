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
    // The pool's own timeout: no connection could be had in time (the server is away, or every
    // pooled connection is busy). Nothing of the call ran.
    return /Connection terminated|connection timeout|Client has encountered a connection error|timeout exceeded when trying to connect/i.test(
      message,
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
