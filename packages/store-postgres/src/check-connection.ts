import pg from 'pg';
import { databaseAddress, redactDatabaseUrl } from './database-url.js';
import { isConnectionError, pgCode } from './pg-errors.js';

/** Why a connection check failed. */
export type ConnectionProblem =
  | 'unreachable'
  | 'authentication'
  | 'database-missing'
  | 'invalid-url'
  | 'other';

/** The answer of {@link checkPostgresConnection}. */
export type ConnectionCheck =
  | { ok: true; serverVersion: string }
  | { ok: false; problem: ConnectionProblem; message: string };

/**
 * Connects once and runs `SELECT version()`, telling apart the usual ways it fails: the host is
 * unreachable or refuses connections, the password (or role) is wrong, the database does not
 * exist. Every message names host, port and database and masks the password.
 *
 * @param url - `postgres://user:password@host:5432/database`
 * @param options - `timeoutMs` for the connection attempt (default 5000)
 * @returns `{ ok: true, serverVersion }` or `{ ok: false, problem, message }`
 * @example
 * ```ts
 * const check = await checkPostgresConnection(process.env.COLLOQUY_DATABASE_URL!);
 * if (!check.ok) console.error(check.message);
 * ```
 */
export async function checkPostgresConnection(
  url: string,
  options: { timeoutMs?: number } = {},
): Promise<ConnectionCheck> {
  let where: string;
  try {
    const { host, port, database } = databaseAddress(url);
    where = `${host}:${port}, database "${database}"`;
  } catch (error) {
    return { ok: false, problem: 'invalid-url', message: (error as Error).message };
  }
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: options.timeoutMs ?? 5000 });
  client.on('error', () => {});
  try {
    await client.connect();
    const result = await client.query<{ version: string }>('SELECT version() AS version');
    return { ok: true, serverVersion: result.rows[0]?.version ?? 'unknown' };
  } catch (error) {
    const code = pgCode(error);
    const reason = (error as Error).message;
    if (code === '28P01' || code === '28000') {
      return {
        ok: false,
        problem: 'authentication',
        message: `PostgreSQL at ${where} refused the login (${reason}): check the user and password in ${redactDatabaseUrl(url)}.`,
      };
    }
    if (code === '3D000') {
      return {
        ok: false,
        problem: 'database-missing',
        message: `PostgreSQL at ${where}: the database does not exist. Create it (createdb) or fix the name in ${redactDatabaseUrl(url)}.`,
      };
    }
    if (isConnectionError(error)) {
      return {
        ok: false,
        problem: 'unreachable',
        message: `Cannot reach PostgreSQL at ${where} (${reason}): check that the server runs and listens there.`,
      };
    }
    return { ok: false, problem: 'other', message: `PostgreSQL at ${where} failed: ${reason}.` };
  } finally {
    await client.end().catch(() => {});
  }
}
