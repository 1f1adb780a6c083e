import { parseArgs } from 'node:util';

/** What {@link parseFlags} returns for a flag spec. */
export type ParsedFlags<S extends FlagSpec> = ReturnType<
  typeof parseArgs<{ args: string[]; options: S; allowPositionals: true; strict: true }>
>;

import { ColloquyError } from '@colloquy/core';

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
    return parseArgs({ args: [...args], options: spec, allowPositionals: true, strict: true });
  } catch (error) {
    throw new ColloquyError(
      'INVALID_ARGUMENT',
      `${(error as Error).message.replace(/\. To specify.*$/s, '')}. See \`colloquy ${command} --help\`.`,
    );
  }
}
