import { parseArgs } from 'node:util';

/** What {@link parseFlags} returns for a flag spec. */
export type ParsedFlags<S extends FlagSpec> = ReturnType<
  typeof parseArgs<{ args: string[]; options: S; allowPositionals: true; strict: true }>
>;

import { ColloquyError } from '@colloquy/core';
import { CLI } from './cli-name.js';

/** A flag definition for {@link parseFlags}. */
export type FlagSpec = Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }>;

/** Flags shared by every command that talks to a running bot. */
export const GATEWAY_FLAGS = {
  config: { type: 'string', short: 'c' },
  'state-dir': { type: 'string' },
  url: { type: 'string' },
  token: { type: 'string' },
  json: { type: 'boolean' },
} as const satisfies FlagSpec;

/**
 * Parses a command's arguments strictly: unknown flags are an error that names the command's help.
 *
 * @param args - the arguments after the command words
 * @param spec - the flags the command accepts
 * @param command - the command, for the error message (e.g. `sessions list`)
 * @returns flag values and positionals
 * @throws ColloquyError `INVALID_ARGUMENT` for unknown flags or missing flag values
 */
export function parseFlags<S extends FlagSpec>(
  args: readonly string[],
  spec: S,
  command: string,
): ParsedFlags<S> {
  try {
    return parseArgs({
      args: joinNegativeValues(args, spec),
      options: spec,
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    const message = (error as Error).message;
    const missing = /^Option '(?:-\w, )?(--?[\w-]+)(?: <value>)?' argument (?:missing|is ambiguous)/.exec(
      message,
    );
    throw new ColloquyError(
      'INVALID_ARGUMENT',
      `${missing ? `${missing[1]} needs a value` : message.replace(/\. To specify.*$/s, '')}. See \`${CLI} ${command} --help\`.`,
    );
  }
}

/**
 * `--limit -5` as `--limit=-5`, so a negative number reaches the command's own check (which says what
 * the flag accepts) instead of the parser's "argument is ambiguous".
 */
function joinNegativeValues(args: readonly string[], spec: FlagSpec): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const next = args[i + 1];
    const name = arg.startsWith('--')
      ? arg.slice(2)
      : Object.keys(spec).find((key) => arg === `-${spec[key]!.short}`);
    if (name !== undefined && spec[name]?.type === 'string' && next !== undefined && /^-\d/.test(next)) {
      out.push(`--${name}=${next}`);
      i++;
    } else {
      out.push(arg);
    }
  }
  return out;
}
