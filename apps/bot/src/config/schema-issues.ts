import { type ConfigIssue, unknownSettingIssue } from '@colloquy/core';
import type { TSchema } from '@sinclair/typebox';
import { Value, ValueErrorType } from '@sinclair/typebox/value';

/**
 * Validates `value` against a TypeBox schema and turns every error into a config issue whose path
 * starts at `prefix` (e.g. `app` or `channels.webchat`). One issue per path.
 *
 * @param schema - the section's schema
 * @param value - the section, defaults already applied
 * @param prefix - the section's path in the config file
 * @returns the issues, empty when the section is valid
 */
export function schemaIssues(schema: TSchema, value: unknown, prefix: string): ConfigIssue[] {
  const byPath = new Map<string, ConfigIssue>();
  for (const error of Value.Errors(schema, value)) {
    const path = joinPath(prefix, error.path);
    if (byPath.has(path)) continue;
    if (error.type === ValueErrorType.ObjectAdditionalProperties) {
      byPath.set(path, unknownSettingIssue(path, error));
      continue;
    }
    byPath.set(path, { path, expected: describeSchema(error.schema), got: describeValue(path, error.value) });
  }
  return [...byPath.values()];
}

function joinPath(prefix: string, pointer: string): string {
  let path = prefix;
  for (const raw of pointer.split('/').slice(1)) {
    const segment = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (/^\d+$/.test(segment)) path += `[${segment}]`;
    else if (/^[A-Za-z_$][\w$-]*$/.test(segment)) path += `.${segment}`;
    else path += `[${JSON.stringify(segment)}]`;
  }
  return path;
}

function describeSchema(schema: TSchema): string {
  const s = schema as TSchema & Record<string, unknown>;
  if (typeof s['x-expected'] === 'string') return s['x-expected'];
  if (Array.isArray(s.anyOf)) {
    const literals = (s.anyOf as { const?: unknown }[]).map((v) => v.const);
    if (literals.every((l) => l !== undefined)) {
      return `one of ${literals.map((l) => JSON.stringify(l)).join(' | ')}`;
    }
    return (s.anyOf as TSchema[]).map(describeSchema).join(' or ');
  }
  switch (s.type) {
    case 'integer':
    case 'number': {
      const min = typeof s.minimum === 'number' ? s.minimum : undefined;
      const max = typeof s.maximum === 'number' ? s.maximum : undefined;
      if (min !== undefined && max !== undefined) return `${s.type} ${min}..${max}`;
      if (typeof s.exclusiveMinimum === 'number') return `${s.type} > ${s.exclusiveMinimum}`;
      return min !== undefined ? `${s.type} >= ${min}` : String(s.type);
    }
    case 'string': {
      const max = typeof s.maxLength === 'number' ? ` of at most ${s.maxLength} characters` : '';
      return typeof s.minLength === 'number' && s.minLength > 0
        ? `a non-empty string${max}`
        : `a string${max}`;
    }
    case 'boolean':
      return 'true or false';
    case 'array':
      return 'an array';
    case 'object':
      return 'an object';
    default:
      return 'a valid value';
  }
}

const SECRET_NAME = /token|secret|apikey|password/i;

/** Words for a value found in the config; values of secret-looking settings are not echoed. */
export function describeValue(path: string, value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') {
    if (SECRET_NAME.test(path)) return 'a string (value hidden)';
    return JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);
  }
  return String(value);
}
