import type { Logger } from '@colloquy/core';
import type pg from 'pg';

/** How each watched connection failed, kept for whoever holds it. */
const failures = new WeakMap<pg.ClientBase, Error>();

/**
 * Watches every connection `pool` opens, from the moment it connects until it is gone. A
 * connection the server drops (a restart, `pg_terminate_backend`, the network) emits `'error'`
 * whether it sits idle in the pool, is checked out, or is being handed out at that very moment;
 * an `'error'` event without a listener crashes the process, so each connection gets a listener
 * of its own for its whole life, which keeps the failure for {@link connectionFailure}.
 *
 * @param pool - the pool to watch, before it opens a connection
 * @param log - receives one warning per failed connection
 * @param database - names the database in the warning (without credentials)
 */
export function watchConnections(pool: pg.Pool, log: Logger, database: string): void {
  pool.on('connect', (client) => {
    client.on('error', (error) => {
      // A dropped connection reports twice (the server's notice, then the closed socket): once is enough.
      if (failures.has(client)) return;
      failures.set(client, error);
      log.warn({ err: error, database }, 'a PostgreSQL connection failed; the pool opens another');
    });
  });
  // The pool passes on the failure of an idle connection too, already logged by the listener above.
  pool.on('error', () => {});
}

/** How a connection of a watched pool failed, or `undefined` while it works. */
export function connectionFailure(client: pg.ClientBase): Error | undefined {
  return failures.get(client);
}
