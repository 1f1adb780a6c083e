import { ColloquyError } from '@colloquy/core';

/**
 * Readers for method params. Params may come from a WebSocket frame, so every method checks the
 * shape of what it reads and answers `INVALID_ARGUMENT` naming the method and the field. The
 * strings they read (keys, ids, labels, agent ids, queries) never hold a NUL character: no session,
 * run or agent can be named with one, and PostgreSQL cannot take one as a text parameter, so it is
 * refused here, the same way on every store, before it reaches one.
 */
export interface ParamReader {
  /** A required non-empty string (trimmed). */
  string(field: string): string;
  /** An optional string (trimmed; empty counts as absent). */
  optionalString(field: string): string | undefined;
  /** An optional finite number within bounds (inclusive). */
  optionalNumber(field: string, min?: number, max?: number): number | undefined;
  optionalBoolean(field: string): boolean | undefined;
  /** An optional array of strings. */
  optionalStrings(field: string): string[] | undefined;
  /** An optional string (as {@link ParamReader.optionalString} reads it) or array of strings. */
  optionalStringOrStrings(field: string): string | string[] | undefined;
  /** An optional plain object. */
  optionalObject(field: string): Record<string, unknown> | undefined;
  /** Fails when params carry a field not in `allowed`. */
  only(allowed: readonly string[]): void;
}

/**
 * Creates a {@link ParamReader} for one call.
 *
 * @param method - the method name (for messages)
 * @param params - the raw params
 * @returns the reader
 * @throws `INVALID_ARGUMENT` when params is not an object
 */
export function readParams(method: string, params: unknown): ParamReader {
  if (params === undefined || params === null) params = {};
  if (typeof params !== 'object' || Array.isArray(params)) {
    throw invalid(method, 'params', 'an object');
  }
  const p = params as Record<string, unknown>;
  const reader: ParamReader = {
    string(field) {
      const value = p[field];
      if (typeof value !== 'string' || value.trim() === '')
        throw invalid(method, field, 'a non-empty string');
      return withoutNul(method, field, value).trim();
    },
    optionalString(field) {
      const value = p[field];
      if (value === undefined || value === null) return undefined;
      if (typeof value !== 'string') throw invalid(method, field, 'a string');
      return withoutNul(method, field, value).trim() === '' ? undefined : value.trim();
    },
    optionalNumber(field, min = Number.NEGATIVE_INFINITY, max = Number.POSITIVE_INFINITY) {
      const value = p[field];
      if (value === undefined || value === null) return undefined;
      if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
        const range =
          max === Number.POSITIVE_INFINITY ? `a number >= ${min}` : `a number between ${min} and ${max}`;
        throw invalid(method, field, range);
      }
      return value;
    },
    optionalBoolean(field) {
      const value = p[field];
      if (value === undefined || value === null) return undefined;
      if (typeof value !== 'boolean') throw invalid(method, field, 'true or false');
      return value;
    },
    optionalStrings(field) {
      const value = p[field];
      if (value === undefined || value === null) return undefined;
      if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) {
        throw invalid(method, field, 'an array of strings');
      }
      for (const item of value) withoutNul(method, field, item);
      return value as string[];
    },
    optionalStringOrStrings(field) {
      const value = p[field];
      if (value === undefined || value === null || typeof value === 'string')
        return reader.optionalString(field);
      if (!Array.isArray(value)) throw invalid(method, field, 'a string or an array of strings');
      return reader.optionalStrings(field);
    },
    optionalObject(field) {
      const value = p[field];
      if (value === undefined || value === null) return undefined;
      if (typeof value !== 'object' || Array.isArray(value)) throw invalid(method, field, 'an object');
      return value as Record<string, unknown>;
    },
    only(allowed) {
      for (const field of Object.keys(p)) {
        if (!allowed.includes(field)) {
          throw new ColloquyError(
            'INVALID_ARGUMENT',
            `${method}: unknown field "${field}". Accepted fields: ${allowed.join(', ')}.`,
            { method, field },
          );
        }
      }
    },
  };
  return reader;
}

function withoutNul(method: string, field: string, value: string): string {
  if (value.includes('\u0000')) throw invalid(method, field, 'free of NUL characters (U+0000)');
  return value;
}

function invalid(method: string, field: string, expected: string): ColloquyError {
  return new ColloquyError('INVALID_ARGUMENT', `${method}: "${field}" must be ${expected}.`, {
    method,
    field,
  });
}
