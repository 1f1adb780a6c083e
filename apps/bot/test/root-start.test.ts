import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { childEnv } from './support/app-process.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

describe('pnpm start at the repository root', () => {
  const dir = mkdtempSync(join(tmpdir(), 'colloquy-root-start-'));
  let child: ChildProcess | undefined;
  afterAll(() => {
    if (child?.exitCode === null && child.pid) process.kill(-child.pid, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('builds quietly, runs the app, and exits 0 on Ctrl-C', async () => {
    const config = join(dir, 'colloquy.json5');
    writeFileSync(config, JSON.stringify({ gateway: { port: 0 }, channels: { webchat: { port: 0 } } }));
    // Its own process group, so a signal to the group is what Ctrl-C in a terminal sends.
    child = spawn('pnpm', ['start'], {
      cwd: ROOT,
      detached: true,
      env: childEnv({ COLLOQUY_CONFIG: config, COLLOQUY_STATE_DIR: join(dir, 'state') }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child!.once('exit', (code) => resolve(code)));
    const deadline = Date.now() + 120_000;
    while (!output.includes('Colloquy is running.')) {
      if (child.exitCode !== null || Date.now() > deadline)
        throw new Error(`pnpm start did not start:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const beforeBanner = output.slice(0, output.indexOf('Colloquy is running.'));
    expect(beforeBanner).not.toMatch(/Tasks:|Packages in scope|cache (hit|miss)/);
    process.kill(-child.pid!, 'SIGINT');
    expect(await exited).toBe(0);
    expect(output).not.toContain('ELIFECYCLE');
    expect(output).toContain('shutting down');
  }, 150_000);
});
