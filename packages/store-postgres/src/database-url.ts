import { ColloquyError } from '@colloquy/core';

/** The parts of a PostgreSQL URL that are safe to show: no user, no password. */
export interface DatabaseAddress {
  /** The host name or address (default `localhost`). */
  host: string;
  /** The TCP port (default 5432). */
  port: number;
  /** The database name (default: the user name, else `postgres`). */
  database: string;
}

/**
 * Reads host, port and database out of a `postgres://` URL (defaults: `localhost`, 5432, the
 * user name or `postgres`).
 *
 * @throws ColloquyError `CONFIG_INVALID` when the URL is not a `postgres://` or `postgresql://` URL
 */
export function databaseAddress(url: string): DatabaseAddress {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch (cause) {
    throw invalidUrl(url, cause);
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') throw invalidUrl(url);
  const database =
    decodeURIComponent(parsed.pathname.replace(/^\//, '')) ||
    decodeURIComponent(parsed.username) ||
    'postgres';
  return {
    host: parsed.hostname.replace(/^\[|\]$/g, '') || 'localhost',
    port: parsed.port ? Number(parsed.port) : 5432,
    database,
  };
}

/**
 * A database URL with its password replaced by `***` (the user stays, so an operator can tell
 * which role was used). A string that is not a URL is masked whole.
 *
 * @example
 * ```ts
 * redactDatabaseUrl('postgres://bot:s3cret@db:5432/colloquy'); // 'postgres://bot:***@db:5432/colloquy'
 * ```
 */
export function redactDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '***';
  }
}

function invalidUrl(url: string, cause?: unknown): ColloquyError {
  return new ColloquyError(
    'CONFIG_INVALID',
    `"${redactDatabaseUrl(url)}" is not a PostgreSQL URL; write it as postgres://user:password@host:5432/database.`,
    {},
    { cause },
  );
}
