import type { Static, TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

/** The outcome of checking tool arguments: the typed value, or one sentence saying what is wrong. */
export type ArgsCheck<T> = { ok: true; value: T } | { ok: false; error: string };

const MAX_REPORTED_ERRORS = 5;
const MAX_SHOWN_VALUE = 40;

/**
 * Checks model-supplied arguments against a tool's TypeBox schema. Never throws: wrong types,
 * missing required fields, out-of-range numbers, over-long strings and unknown keys (schemas are
 * closed) all come back as one readable sentence naming each bad path.
 *
 * @param toolName - used in the message
 * @param schema - the tool's parameter schema
 * @param args - whatever the model sent
 * @returns the typed arguments, or `{ ok: false, error }`
 */
export function validateToolArgs<S extends TSchema>(
  toolName: string,
  schema: S,
  args: unknown,
): ArgsCheck<Static<S>> {
  const value = args === undefined || args === null ? {} : args;
  if (typeof value !== 'object' || Array.isArray(value)) {
    return {
      ok: false,
      error: `Invalid arguments for ${toolName}: expected a JSON object, got ${describe(value)}.`,
    };
  }
  if (Value.Check(schema, value)) return { ok: true, value: value as Static<S> };
  const problems: string[] = [];
  let more = 0;
  for (const error of Value.Errors(schema, value)) {
    const line = `${error.path || '/'}: ${error.message.toLowerCase()}, got ${describe(error.value)}`;
    if (problems.includes(line)) continue;
    if (problems.length < MAX_REPORTED_ERRORS) problems.push(line);
    else more++;
  }
  const tail = more > 0 ? `; and ${more} more` : '';
  return { ok: false, error: `Invalid arguments for ${toolName}: ${problems.join('; ')}${tail}.` };
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'string') {
    const shown = value.length > MAX_SHOWN_VALUE ? `${value.slice(0, MAX_SHOWN_VALUE)}…` : value;
    return `${JSON.stringify(shown)}${value.length > MAX_SHOWN_VALUE ? ` (${value.length} characters)` : ''}`;
  }
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (value === null) return 'null';
  if (typeof value === 'object') return 'an object';
  return String(value);
}
