import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openPostgresStore } from '@colloquy/store-postgres';
import { startTestPostgres, type TestPostgres } from '@colloquy/testkit/postgres';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type AppProcess, runCliProcess, startApp } from './support/app-process.js';
import { waitFor } from './support/wait-for.js';
import { openProbe } from './support/ws-probe.js';

let server: TestPostgres;
let app: AppProcess | undefined;
const dirs: string[] = [];
beforeAll(async () => {
  server = await startTestPostgres();
}, 60_000);
afterEach(async () => {
  await app?.cleanup();
  app = undefined;
});
afterAll(async () => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  await server?.stop();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'colloquy-pg-app-'));
  dirs.push(dir);
  return dir;
}

describe('colloquy on PostgreSQL', () => {
  it('serves the web chat with sessions in PostgreSQL when COLLOQUY_DATABASE_URL is set', async () => {
    const url = await server.createDatabase();
    app = await startApp({}, { COLLOQUY_DATABASE_URL: url });
    const origin = app.webchatUrl.replace(/\/$/, '');
    const chat = await openProbe(`${origin.replace('http', 'ws')}/ws`, { origin });
    await chat.next((f) => f.type === 'ready');
    chat.send(JSON.stringify({ type: 'message', text: '/status', clientId: 'c1' }));
    const reply = await chat.next(
      (f) => f.type === 'message' && (f.message as { role: string }).role === 'assistant',
      10_000,
    );
    expect((reply.message as { text: string }).text).toContain('Session:');
    chat.close();
    expect(existsSync(join(app.stateDir, 'colloquy.db'))).toBe(false);
    expect(app.output()).not.toContain(server.password);
    expect(app.output()).toContain('Storage:     PostgreSQL, postgres://colloquy:***@127.0.0.1:');

    const store = await openPostgresStore({ url });
    try {
      const sessions = await store.listSessions({});
      expect(sessions.some((s) => s.key.includes(':webchat:'))).toBe(true);
    } finally {
      await store.close();
    }
    const listed = await runCliProcess(['sessions', 'list', '--json'], {
      cwd: app.dir,
      env: { COLLOQUY_GATEWAY_URL: app.gatewayUrl, COLLOQUY_TOKEN: app.token },
    });
    expect(listed.stdout).toContain(':webchat:');
  }, 60_000);

  it('refuses to start against an unreachable database: exit 1, host and port named, no password, nothing written', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as { port: number }).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const dir = tempDir();
    const run = await runCliProcess(['start', '--state-dir', join(dir, 'state'), '--log-format', 'json'], {
      cwd: dir,
      env: { COLLOQUY_DATABASE_URL: `postgres://bot:pw-not-shown@127.0.0.1:${port}/colloquy` },
    });
    expect(run.code).toBe(1);
    expect(run.stderr + run.stdout).toContain(`127.0.0.1:${port}`);
    expect(run.stderr + run.stdout).not.toContain('pw-not-shown');
    expect(existsSync(join(dir, 'state'))).toBe(false);
  }, 30_000);

  it('config check connects and says what is wrong, naming the variable and masking the password', async () => {
    const dir = tempDir();
    const check = (url: string) =>
      runCliProcess(['config', 'check', '--state-dir', join(dir, 'state')], {
        cwd: dir,
        env: { COLLOQUY_DATABASE_URL: url },
      });
    const good = await check(await server.createDatabase());
    expect(good.code).toBe(0);
    expect(good.stdout).toContain('Storage:  PostgreSQL');
    expect(good.stdout).not.toContain(server.password);

    const wrongPassword = await check(server.url.replace(`:${server.password}@`, ':wrong-pass-here@'));
    expect(wrongPassword.code).toBe(1);
    expect(wrongPassword.stderr).toContain('refused the login');
    expect(wrongPassword.stderr).toContain('COLLOQUY_DATABASE_URL');
    expect(wrongPassword.stderr).not.toContain('wrong-pass-here');

    const missing = await check(server.url.replace(/\/postgres$/, '/nope_db'));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('does not exist');
  }, 30_000);
});

/** The advisory lock class each cluster instance holds on its control connection (`@colloquy/cluster`). */
const INSTANCE_LOCK_CLASS = 0x436f_6c01;

/**
 * Ends the control connection of every instance on the database of `url`; with `reaped`, first
 * removes their rows as another instance's reaper does when it takes an instance for dead. Returns
 * how many connections were ended.
 */
async function cutControlConnections(url: string, options: { reaped?: boolean } = {}): Promise<number> {
  const store = await openPostgresStore({ url });
  try {
    if (options.reaped) await store.sql('DELETE FROM colloquy_cluster.instances', []);
    const ended = await store.sql(
      `SELECT pg_terminate_backend(l.pid) FROM pg_locks l JOIN pg_database d ON d.oid = l.database
       WHERE l.locktype = 'advisory' AND l.classid = $1::bigint::oid AND l.objsubid = 2
         AND d.datname = current_database()`,
      [INSTANCE_LOCK_CLASS],
    );
    return ended.length;
  } finally {
    await store.close();
  }
}

/** The exit code of an app process, once it exits (null if it does not within `ms`). */
function exitCodeOf(app: AppProcess, ms: number): Promise<number | null> {
  if (app.child.exitCode !== null) return Promise.resolve(app.child.exitCode);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(null), ms);
    app.child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

describe('the exit code of an instance on PostgreSQL', () => {
  it('is 1 when the instance was taken for dead while its control connection was down, so a supervisor restarts it', async () => {
    const url = await server.createDatabase();
    app = await startApp({}, { COLLOQUY_DATABASE_URL: url });
    const exited = exitCodeOf(app, 30_000);
    expect(await cutControlConnections(url, { reaped: true })).toBe(1);
    expect(await exited).toBe(1);
    expect(app.output()).toContain('"msg":"shutting down after a failure"');
  }, 60_000);

  it('keeps running when only its control connection was cut: it reconnects and holds its place', async () => {
    const url = await server.createDatabase();
    app = await startApp({}, { COLLOQUY_DATABASE_URL: url });
    expect(await cutControlConnections(url)).toBe(1);
    const running = app;
    await waitFor(
      async () => running.output(),
      (output) => output.includes('cluster: the control connection is back'),
      'the reconnect',
    );
    expect(app.child.exitCode).toBeNull();
    expect(await webchatStatus(app)).toContain('Session:');
  }, 60_000);

  it('is 0 after SIGTERM', async () => {
    const url = await server.createDatabase();
    app = await startApp({}, { COLLOQUY_DATABASE_URL: url });
    const exited = exitCodeOf(app, 30_000);
    app.child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(app.output()).toContain('"signal":"SIGTERM"');
  }, 60_000);
});

describe('an instance whose database is unreachable', () => {
  it('says so in /healthz and colloquy status after storage.unreachableAfterSeconds, and recovers by itself', async () => {
    const url = await server.createDatabase();
    app = await startApp({ storage: { unreachableAfterSeconds: 1 } }, { COLLOQUY_DATABASE_URL: url });
    const running = app;
    const health = async () => {
      const res = await fetch(new URL('healthz', running.webchatUrl));
      return `${res.status} ${await res.text()}`;
    };
    const status = () =>
      runCliProcess(['status', '--config', running.configFile, '--state-dir', running.stateDir], {
        cwd: running.dir,
        env: { COLLOQUY_GATEWAY_URL: running.gatewayUrl, COLLOQUY_TOKEN: running.token },
      });
    expect(await health()).toBe('200 ok\n');
    await server.stopServer();
    try {
      const answer = await waitFor(
        health,
        (text) => text.startsWith('503'),
        'the health endpoint to report it',
      );
      expect(answer).toMatch(/^503 unhealthy: the database has been unreachable for \d+ s \(since /);
      // run.json is refreshed every 5 s; status reads it.
      const said = await waitFor(
        status,
        (run) => run.stderr.includes('unreachable'),
        'status to report it',
        20_000,
      );
      expect(said.code).toBe(1);
      expect(said.stderr).toContain(`Colloquy is running at ${running.gatewayUrl}`);
      expect(said.stderr).toContain('the database has been unreachable for');
    } finally {
      await server.startServer();
    }
    await waitFor(health, (text) => text === '200 ok\n', 'the health endpoint to recover', 20_000);
    expect(running.child.exitCode).toBeNull();
    expect(await webchatStatus(running)).toContain('Session:');
    await waitFor(status, (run) => run.code === 0, 'status to answer again', 20_000);
  }, 90_000);
});

/** Asks the web chat for /status and returns the reply. */
async function webchatStatus(running: AppProcess): Promise<string> {
  const origin = running.webchatUrl.replace(/\/$/, '');
  const chat = await openProbe(`${origin.replace('http', 'ws')}/ws`, { origin });
  try {
    await chat.next((f) => f.type === 'ready');
    chat.send(JSON.stringify({ type: 'message', text: '/status', clientId: `c${Date.now()}` }));
    const reply = await chat.next(
      (f) => f.type === 'message' && (f.message as { role: string }).role === 'assistant',
      20_000,
    );
    return (reply.message as { text: string }).text;
  } finally {
    chat.close();
  }
}
