import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
const READY_TEXT = 'Colloquy is running.';

/** A `colloquy start` child process as users run it, on a temp state directory. */
export interface BenchApp {
  child: ChildProcess;
  pid: number;
  dir: string;
  stateDir: string;
  webchatUrl: string;
  /** Sends SIGINT and waits for the exit (SIGKILL after 15 s). */
  stop(): Promise<void>;
}

/** Options of {@link startBenchApp}. */
export interface BenchAppOptions {
  /** The config file's content (the web chat and gateway get free ports unless set). */
  config: Record<string, unknown>;
  env?: Record<string, string>;
  /** Write a V8 CPU profile of the app into this directory when it exits (`node --cpu-prof`). */
  cpuProfileDir?: string;
  /** More `node` flags for the app, before the CLI (e.g. `--import` of a probe). */
  nodeArgs?: readonly string[];
}

/**
 * Starts `node dist/cli.js start --config <tmp>/colloquy.json5` with a SQLite store in the temp dir.
 * Its log lines go to a file, as under a service manager, so reading them costs the bench nothing.
 */
export async function startBenchApp(options: BenchAppOptions): Promise<BenchApp> {
  const dir = mkdtempSync(join(tmpdir(), 'colloquy-e2e-'));
  const stateDir = join(dir, 'state');
  const configFile = join(dir, 'colloquy.json5');
  const channels = (options.config.channels ?? {}) as Record<string, unknown>;
  writeFileSync(
    configFile,
    JSON.stringify({
      ...options.config,
      gateway: { port: 0, ...(options.config.gateway as object) },
      channels: { ...channels, webchat: { port: 0, ...(channels.webchat as object) } },
    }),
  );
  const logFile = join(dir, 'app.log');
  const out = openSync(logFile, 'w');
  const nodeArgs = [
    ...(options.cpuProfileDir ? ['--cpu-prof', '--cpu-prof-dir', options.cpuProfileDir] : []),
    ...(options.nodeArgs ?? []),
  ];
  const child = spawn(
    process.execPath,
    [...nodeArgs, CLI, 'start', '--config', configFile, '--state-dir', stateDir, '--log-format', 'json'],
    {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '', HOME: dir, ...options.env },
      stdio: ['ignore', out, out],
    },
  );
  closeSync(out);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const log = () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '');
  const deadline = Date.now() + 30_000;
  while (!log().includes(READY_TEXT)) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`the app exited before it was ready:\n${log().slice(-4000)}`);
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the app did not start within 30 s:\n${log().slice(-4000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  const run = JSON.parse(readFileSync(join(stateDir, 'run.json'), 'utf8')) as { webchatUrl: string };
  return {
    child,
    pid: child.pid!,
    dir,
    stateDir,
    webchatUrl: run.webchatUrl,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGINT');
        const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
