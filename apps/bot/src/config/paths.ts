import { existsSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import type { Env } from './env-overlay.js';

/** The config file `colloquy start` picks up from the working directory when no `--config` is given. */
export const DEFAULT_CONFIG_FILE = 'colloquy.json5';
/** The state directory name used when nothing else is configured. */
export const DEFAULT_STATE_DIR = '.colloquy';

/**
 * The directory relative paths are resolved from: where the user ran the command. Turbo and package
 * managers run scripts in the package folder but say where they were invoked (`TURBO_INVOCATION_DIR`,
 * `INIT_CWD`), so `pnpm start` at the repository root keeps its state in the root's `.colloquy/`,
 * where `node apps/bot/dist/cli.js status` run from the root finds it.
 *
 * @param env - the environment
 * @param cwd - the process working directory
 * @returns an absolute directory
 */
export function invocationDir(env: Env = process.env, cwd: string = process.cwd()): string {
  for (const dir of [env.TURBO_INVOCATION_DIR, env.INIT_CWD]) {
    if (dir && isAbsolute(dir) && existsSync(dir)) return dir;
  }
  return cwd;
}

/**
 * The config file to load: the explicit one, else `COLLOQUY_CONFIG`, else `colloquy.json5` in the
 * invocation directory when it exists, else none (the embedded default).
 *
 * @param explicit - the `--config` flag
 * @param baseDir - the invocation directory
 * @param env - the environment
 * @returns an absolute path, or `undefined` for the embedded default
 */
export function locateConfigFile(
  explicit: string | undefined,
  baseDir: string,
  env: Env,
): string | undefined {
  const given = explicit ?? env.COLLOQUY_CONFIG?.trim();
  if (given) return resolve(baseDir, given);
  const candidate = join(baseDir, DEFAULT_CONFIG_FILE);
  return existsSync(candidate) ? candidate : undefined;
}
