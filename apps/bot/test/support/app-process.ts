import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The built CLI (turbo builds it before the tests). */
export const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));

/** A `colloquy start` child process in a temp directory. */
export interface AppProcess {
  child: ChildProcess;
  dir: string;
  stateDir: string;
  configFile: string;
  gatewayUrl: string;
  webchatUrl: string;
  token: string;
  /** Everything the process printed so far. */
  output(): string;
  /** Sends SIGINT and resolves with the exit code (SIGKILL after 10 s). */
  stop(): Promise<number | null>;
  /** Stops the process if needed and removes the temp directory. */
  cleanup(): Promise<void>;
}

/** The environment of child processes: no inherited model keys or package-manager variables. */
export function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), ...extra };
}

/**
 * Starts `node dist/cli.js start` with a config file (web chat and gateway on free ports unless the
 * config says otherwise) and waits until it printed that it is running.
 */
export async function startApp(
  config: Record<string, unknown> = {},
  env: Record<string, string> = {},
  reuse?: { stateDir: string; configFile: string },
): Promise<AppProcess> {
  const dir = reuse ? dirname(reuse.configFile) : mkdtempSync(join(tmpdir(), 'colloquy-app-'));
  const stateDir = reuse?.stateDir ?? join(dir, 'state');
  const configFile = reuse?.configFile ?? join(dir, 'colloquy.json5');
  const channels = (config.channels ?? {}) as Record<string, unknown>;
  if (!reuse) {
    writeFileSync(
      configFile,
      JSON.stringify({
        ...config,
        gateway: { port: 0, ...(config.gateway as object) },
        channels: { ...channels, webchat: { port: 0, ...(channels.webchat as object) } },
      }),
    );
  }
  const child = spawn(
    process.execPath,
    [CLI, 'start', '--config', configFile, '--state-dir', stateDir, '--log-format', 'json'],
    { cwd: dir, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  // A start takes about 1 s; on 2 cores shared with other suites, a restarted instance printed
  // nothing at all for 15 s once, so the bound is wide: it only keeps a broken start from hanging.
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`the app did not start within 45 s:\n${output}`)),
      45_000,
    );
    const check = () => {
      if (output.includes('Colloquy is running.')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the app exited with ${code} before it was ready:\n${output}`));
    });
  });
  const run = JSON.parse(readFileSync(join(stateDir, 'run.json'), 'utf8')) as {
    gatewayUrl: string;
    webchatUrl: string;
  };
  const configured = (config.gateway as { token?: string } | undefined)?.token;
  const token = configured ?? readFileSync(join(stateDir, 'admin-token'), 'utf8').trim();
  let stopped: Promise<number | null> | undefined;
  const stop = () => {
    stopped ??= (async () => {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill('SIGINT');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    })();
    return stopped;
  };
  return {
    child,
    dir,
    stateDir,
    configFile,
    gatewayUrl: run.gatewayUrl,
    webchatUrl: run.webchatUrl,
    token,
    output: () => output,
    stop,
    async cleanup() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The result of one CLI run. */
export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI to completion (asynchronously: a fake model in the test process must keep answering). */
export function runCliProcess(
  args: readonly string[],
  options: { cwd: string; env?: Record<string, string> },
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: options.cwd,
      env: childEnv(options.env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
