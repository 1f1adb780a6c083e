import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type AppProcess, runCliProcess, startApp } from './support/app-process.js';

let app: AppProcess | undefined;
afterEach(async () => {
  await app?.cleanup();
  app = undefined;
});

describe('colloquy start and Ctrl-C', () => {
  it('prints the admin token once, keeps it 0600, and stops cleanly on SIGINT', async () => {
    app = await startApp();
    expect(app.output()).toContain(`Admin token: ${app.token}`);
    expect(app.output()).toContain(`Owner page:  ${app.webchatUrl}?admin=${app.token}`);
    for (const file of ['admin-token', 'webchat-cookie-secret']) {
      expect(statSync(join(app.stateDir, file)).mode & 0o777).toBe(0o600);
    }
    expect(statSync(app.stateDir).mode & 0o777).toBe(0o700);
    const code = await app.stop();
    expect(code).toBe(0);
    expect(app.output()).toContain('"msg":"shutting down"');
    expect(existsSync(join(app.stateDir, 'run.json'))).toBe(false);
    await expect(fetch(app.webchatUrl)).rejects.toThrow();
  });

  it('does not print the token again on the next start with the same state dir', async () => {
    app = await startApp();
    const { token, stateDir, configFile } = app;
    await app.stop();
    const again = await startApp({}, {}, { stateDir, configFile });
    try {
      expect(again.token).toBe(token);
      expect(again.output()).not.toContain(token);
      expect(again.output()).toContain('Owner page:');
      expect(again.output()).toContain('admin-token>');
    } finally {
      await again.stop();
    }
  });
});

describe('a start that fails', () => {
  it('refuses a second instance on the same SQLite state directory, and starts after a killed one', async () => {
    app = await startApp();
    const second = await runCliProcess(
      ['start', '--config', app.configFile, '--state-dir', app.stateDir, '--log-format', 'json'],
      { cwd: app.dir },
    );
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`Colloquy is already running on the state directory ${app.stateDir}`);
    expect(second.stderr).toContain(`(pid ${app.child.pid})`);
    expect(second.stderr).toContain('COLLOQUY_DATABASE_URL');
    // The first one is untouched, and a lock left by a killed process is taken over.
    expect((await fetch(app.webchatUrl)).status).toBe(200);
    const { stateDir, configFile } = app;
    await new Promise<void>((resolve) => {
      app!.child.once('exit', () => resolve());
      app!.child.kill('SIGKILL');
    });
    expect(existsSync(join(stateDir, 'colloquy.lock'))).toBe(true);
    const again = await startApp({}, {}, { stateDir, configFile });
    await again.stop();
    expect(existsSync(join(stateDir, 'colloquy.lock'))).toBe(false);
  });

  it('explains a busy port, exits 1, and keeps no admin token it never showed', async () => {
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as AddressInfo).port;
    const dir = mkdtempSync(join(tmpdir(), 'colloquy-busy-'));
    try {
      writeFileSync(
        join(dir, 'colloquy.json5'),
        JSON.stringify({ gateway: { port: 0 }, channels: { webchat: { port } } }),
      );
      const run = await runCliProcess(['start', '--log-format', 'json'], { cwd: dir });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(
        `Colloquy could not start: 127.0.0.1:${port} (the web chat) is already in use`,
      );
      expect(existsSync(join(dir, '.colloquy', 'admin-token'))).toBe(false);
    } finally {
      busy.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
