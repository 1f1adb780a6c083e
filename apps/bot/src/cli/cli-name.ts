import { basename, isAbsolute, relative } from 'node:path';
import type { Env } from '../config/env-overlay.js';
import { invocationDir } from '../config/paths.js';

/** The root package of the Colloquy repository, whose `pnpm colloquy` script runs this CLI. */
const REPOSITORY_PACKAGE = 'colloquy-monorepo';

/**
 * How the user calls this CLI, for messages that name a command: `colloquy` when installed,
 * `pnpm colloquy` under the repository's root scripts (`pnpm colloquy`, `pnpm start`), else
 * `node <path>/cli.js` as it was run.
 *
 * @param env - the environment (package managers set `npm_package_name`)
 * @param script - the script node runs (`process.argv[1]`)
 * @returns the command, e.g. `pnpm colloquy`
 */
export function cliName(env: Env = process.env, script: string | undefined = process.argv[1]): string {
  if (env.npm_package_name === REPOSITORY_PACKAGE) return 'pnpm colloquy';
  if (!script || basename(script) !== 'cli.js') return 'colloquy';
  const rel = relative(invocationDir(env), script);
  return `node ${rel.startsWith('..') || isAbsolute(rel) ? script : rel}`;
}

/** This process's {@link cliName}. */
export const CLI = cliName();
