import { AsyncLocalStorage } from 'node:async_hooks';
import { ColloquyError, type Logger, type SessionRecord, silentLogger } from '@colloquy/core';
import type { Store, StoreTransaction } from '@colloquy/core/store';
import pg from 'pg';
import { connectionFailure, watchConnections } from './connection-failures.js';
import { type DatabaseAddress, databaseAddress, redactDatabaseUrl } from './database-url.js';
import { migrate, POSTGRES_SCHEMA_VERSION, quoteIdent } from './migrations.js';
import { isConnectionError, toStoreError } from './pg-errors.js';
import { type PgConnection, PgOperations } from './pg-operations.js';
import { preparedQueryable, StatementNames } from './prepared-statements.js';

/** Options of {@link openPostgresStore}. */
export interface PostgresStoreOptions {
  /** `postgres://user:password@host:5432/database`. */
  url: string;
  /** The schema the tables live in; created when missing. Default `colloquy`. */
  schema?: string;
  /** Most connections the pool opens. Default 10. */
  maxConnections?: number;
  /**
   * How long opening a new connection to the server may take before the call fails with a
   * retryable `STORE_ERROR` (the server is away or does not answer). Default 10,000 ms.
   */
  connectionTimeoutMs?: number;
  /**
   * How long a call waits, in line, for one of the `maxConnections` pooled connections when all of
   * them are busy, before it fails with a retryable `STORE_ERROR` (`details.reason: 'pool-busy'`).
   * Waiting is the store's back-pressure under load: a burst is served in order, a little later,
   * rather than failed. Default 60,000 ms.
   */
  checkoutTimeoutMs?: number;
  /** For migration messages and connection errors. Default silent. */
  logger?: Logger;
  /**
   * Run the store's statements as named prepared statements, parsed once per connection. Default
   * true; set false behind a pooler that cannot keep them (PgBouncer in transaction mode before 1.21).
   */
  preparedStatements?: boolean;
}

interface OpenTransaction {
  active: boolean;
}

/**
 * The Colloquy Store on PostgreSQL: sessions, transcripts, runs, the announce outbox and inbox,
 * thread bindings and pairings in one schema, over a connection pool. Open it with
 * {@link openPostgresStore}.
 *
 * Each call runs on a pooled connection; a call that writes several rows (or reads, then writes,
 * like a patch) runs in its own transaction, with `SELECT ... FOR UPDATE` row locks so concurrent
 * patches of one row never lose a field. `transaction(fn)` holds one connection for `fn` at READ
 * COMMITTED: other transactions never see its writes before the commit, and a dropped connection
 * rolls it back.
 */
export class PostgresStore extends PgOperations implements Store {
  /** Where the database is (no credentials). */
  readonly address: DatabaseAddress;
  /** The schema the tables live in. */
  readonly schema: string;
  /** The schema version, always `POSTGRES_SCHEMA_VERSION` once opened. */
  readonly schemaVersion = POSTGRES_SCHEMA_VERSION;
  private readonly pool: pg.Pool;
  private readonly openTransaction: AsyncLocalStorage<OpenTransaction>;
  private state: { closed: boolean };
  /** Names of the statements its connections prepare. */
  private readonly names: StatementNames;

  /** @internal Use {@link openPostgresStore}, which connects and migrates first. */
  constructor(pool: pg.Pool, address: DatabaseAddress, schema: string, preparedStatements = true) {
    const openTransaction = new AsyncLocalStorage<OpenTransaction>();
    const state = { closed: false };
    const fail = (error: unknown) => toStoreError(error, address);
    const assertUsable = () => {
      if (state.closed) throw closedError(address);
      if (openTransaction.getStore()?.active) {
        throw new ColloquyError(
          'STORE_ERROR',
          'A Store method was called on the store inside its own transaction; call it on the `tx` handle that transaction(fn) passes to fn.',
        );
      }
    };
    const names = new StatementNames(preparedStatements ? undefined : 0);
    const connection: PgConnection = {
      query: preparedQueryable(pool, names).query,
      atomic: (work) => inTransaction(pool, (client) => work(preparedQueryable(client, names))),
      assertUsable,
      fail,
      retryReads: true,
    };
    super(connection);
    this.pool = pool;
    this.address = address;
    this.schema = schema;
    this.openTransaction = openTransaction;
    this.state = state;
    this.names = names;
  }

  /**
   * Runs `fn` in one transaction on one pooled connection: everything it writes through `tx`
   * commits together, or, when it rejects or the connection drops, nothing does.
   */
  override async transaction<T>(fn: (tx: StoreTransaction) => Promise<T>): Promise<T> {
    this.db.assertUsable();
    // What `fn` throws is rethrown as it is; only the driver's own failures are mapped.
    let thrownByFn: { error: unknown } | undefined;
    try {
      return await inTransaction(this.pool, async (client) => {
        const open: OpenTransaction = { active: true };
        const prepared = preparedQueryable(client, this.names);
        const tx = new PgOperations({
          query: prepared.query,
          atomic: (work) => work(prepared),
          assertUsable: () => {
            if (!open.active) {
              throw new ColloquyError(
                'STORE_ERROR',
                'This transaction is over: a `tx` handle is valid only until the function given to transaction(fn) settles.',
              );
            }
          },
          fail: (error) => toStoreError(error, this.address),
          retryReads: false,
        });
        try {
          return await this.openTransaction.run(open, () => fn(tx));
        } catch (error) {
          thrownByFn = { error };
          throw error;
        } finally {
          open.active = false;
        }
      });
    } catch (error) {
      if (thrownByFn && thrownByFn.error === error) throw error;
      throw toStoreError(error, this.address);
    }
  }

  /**
   * `postgres:<sessionId>`: the transcript's place in this store. It names no host, port or
   * database, because locators reach models and chats (spec section 5), and connection details
   * are the operator's, not theirs.
   */
  transcriptLocator(session: SessionRecord): string {
    return `postgres:${session.sessionId}`;
  }

  /** Waits for calls in flight, then closes every pooled connection. Closing twice is fine. */
  async close(): Promise<void> {
    if (this.state.closed) return;
    this.state.closed = true;
    await this.pool.end();
  }
}

/**
 * Connects to PostgreSQL, creates or upgrades the store's schema (under an advisory lock, so
 * instances starting at once take turns), and returns the store.
 *
 * @param options - the URL and pool settings
 * @returns the open store; close it with `await store.close()`
 * @throws ColloquyError `STORE_ERROR` when the database cannot be reached (the message names host
 *   and port, never the password), `STORE_VERSION` when the schema is newer than this build,
 *   `CONFIG_INVALID` for a URL that is not `postgres://`
 * @example
 * ```ts
 * import { openPostgresStore } from '@colloquy/store-postgres';
 *
 * const store = await openPostgresStore({ url: process.env.COLLOQUY_DATABASE_URL! });
 * console.log(await store.listSessions({ limit: 10 }));
 * await store.close();
 * ```
 */
export async function openPostgresStore(options: PostgresStoreOptions): Promise<PostgresStore> {
  const address = databaseAddress(options.url);
  const schema = options.schema ?? 'colloquy';
  if (!/^[a-z_][a-z0-9_]*$/.test(schema)) {
    throw new ColloquyError(
      'CONFIG_INVALID',
      `The schema name "${schema}" must be lower-case letters, digits and underscores.`,
      { schema },
    );
  }
  const log = options.logger ?? silentLogger;
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.maxConnections ?? 10,
    // The pool's one timeout bounds both the wait in line for a busy pool and opening a connection;
    // the client's own timeout, shorter, bounds the opening alone.
    connectionTimeoutMillis: options.checkoutTimeoutMs ?? 60_000,
    Client: clientOpeningWithin(options.connectionTimeoutMs ?? 10_000),
    options: `-c search_path=${quoteIdent(schema)}`,
    application_name: 'colloquy',
  });
  // A connection that dies (server restart, network), idle or in use, must not crash the process.
  watchConnections(pool, log, redactDatabaseUrl(options.url));
  try {
    const result = await withClient(pool, (client) => migrate(client, schema));
    if (result.from !== result.to)
      log.info({ schema, from: result.from, to: result.to }, 'PostgreSQL schema migrated');
  } catch (error) {
    await pool.end().catch(() => {});
    throw toStoreError(error, address);
  }
  return new PostgresStore(pool, address, schema, options.preparedStatements ?? true);
}

/** A `pg.Client` whose connecting gives up after `timeoutMs`, whatever the pool's wait in line. */
function clientOpeningWithin(timeoutMs: number): typeof pg.Client {
  return class extends pg.Client {
    constructor(config?: pg.ClientConfig) {
      super({ ...config, connectionTimeoutMillis: timeoutMs });
    }
  };
}

/**
 * Checks a connection out for `work`; a connection that broke (its failure is kept by
 * {@link watchConnections}) is destroyed, not reused.
 */
async function withClient<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    return await work(client);
  } catch (error) {
    if (isConnectionError(error)) broken = error as Error;
    throw error;
  } finally {
    client.release(connectionFailure(client) ?? broken);
  }
}

/**
 * Runs `work` in a transaction on a pooled connection: BEGIN, `work`, COMMIT; ROLLBACK when it
 * throws. A connection the server had already closed fails at BEGIN, before anything ran: then
 * the transaction starts once more on a fresh connection.
 */
async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    let begun = false;
    try {
      return await withClient(pool, async (client) => {
        await client.query('BEGIN');
        begun = true;
        let result: T;
        try {
          result = await work(client);
        } catch (error) {
          await client.query('ROLLBACK').catch(() => {});
          throw error;
        }
        await client.query('COMMIT');
        return result;
      });
    } catch (error) {
      if (begun || attempt > 1 || !isConnectionError(error)) throw error;
    }
  }
}

function closedError(address: DatabaseAddress): ColloquyError {
  return new ColloquyError(
    'STORE_ERROR',
    `The PostgreSQL store for ${address.host}:${address.port}/${address.database} is closed; open it again with openPostgresStore.`,
  );
}
