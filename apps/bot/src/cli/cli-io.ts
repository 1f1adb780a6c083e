import type { Env } from '../config/env-overlay.js';

/** Where a CLI command reads its environment and writes its output. Tests pass their own. */
export interface CliIo {
  /** Where command output goes. */
  out: NodeJS.WritableStream & { isTTY?: boolean };
  /** Where errors and warnings go. */
  err: NodeJS.WritableStream & { isTTY?: boolean };
  /** The environment variables the commands read. */
  env: Env;
}

/** The process's own streams and environment. */
export const processIo: CliIo = { out: process.stdout, err: process.stderr, env: process.env };

/** Writes lines to a stream, each ended by a newline. */
export function writeLines(stream: NodeJS.WritableStream, ...lines: string[]): void {
  stream.write(`${lines.join('\n')}\n`);
}
