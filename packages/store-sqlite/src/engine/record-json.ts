import { ColloquyError } from '@colloquy/core';

/** Parses a stored JSON record, or returns `undefined` when there was no row. */
export function parseOptional<T>(json: string | undefined): T | undefined {
  return json === undefined ? undefined : (JSON.parse(json) as T);
}

/**
 * Serialises a record for storage.
 *
 * @throws `INVALID_ARGUMENT` when the value is not JSON-serialisable
 */
export function serialize(value: unknown, what: string): string {
  try {
    return JSON.stringify(value);
  } catch (error) {
    throw new ColloquyError(
      'INVALID_ARGUMENT',
      `The ${what} cannot be stored because it is not JSON-serialisable (${(error as Error).message}); ` +
        'keep records to plain objects, arrays, strings, numbers and booleans.',
      {},
      { cause: error },
    );
  }
}

/** The fields of a patch that are set (an `undefined` field leaves the stored one alone). */
export function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
