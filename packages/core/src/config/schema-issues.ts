/**
 * TypeBox errors as config issues: one issue per path, each with the setting's path as users write it
 * (`channels.telegram.accounts[0].token`), what the schema accepts in words and what was found.
 */
import type { TSchema } from '@sinclair/typebox';
import { Value, type ValueError, ValueErrorType } from '@sinclair/typebox/value';
import { type ConfigIssue, unknownSettingIssue } from './config-issue.js';

/**
 * Checks a value against a TypeBox schema and turns every error into a {@link ConfigIssue}: unknown
 * keys with {@link unknownSettingIssue} (allowed keys and a suggestion), every other error as
 * `expected` (the schema's `x-expected` wording, else words built from its type and limits) and `got`
 * (the value, hidden for settings named like secrets). One issue per path, the first error wins.
 *
 * @param schema - the schema of the section
 * @param value - the section, defaults already applied
 * @param prefix - the section's path in the config file (`channels.discord`); `''` for the root
 * @returns the issues; empty when the value is valid
 * @example
 * ```ts
 * schemaIssues(Type.Object({ port: Type.Integer({ minimum: 0, maximum: 65535 }) }), { port: 'x' }, 'gateway');
 * // [{ path: 'gateway.port', expected: 'integer 0..65535', got: '"x"' }]
 * ```
 */
export function schemaIssues(schema: TSchema, value: unknown, prefix = ''): ConfigIssue[] {
  const byPath = new Map<string, ConfigIssue>();
  for (const error of Value.Errors(schema, value)) {
    const path = joinPath(prefix, error.path, value);
    if (!byPath.has(path)) byPath.set(path, toIssue(path, error));
  }
  return [...byPath.values()];
}

/**
 * Words for a value found in a config: quoted strings (shortened), numbers, `an array of 3`,
 * `nothing`. The value of a setting whose path names a token, secret, API key or password is hidden.
 *
 * @param path - the setting's path (decides whether the value is a secret)
 * @param value - what was found
 * @returns the words, for an issue's `got`
 */
export function describeConfigValue(path: string, value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') {
    if (SECRET_NAME.test(path)) return 'a string (value hidden)';
    return JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);
  }
  if (typeof value === 'number' && Number.isInteger(value) && !Number.isSafeInteger(value)) {
    return `${value} (a number too large to be exact; write it as a quoted string)`;
  }
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return typeof value;
}

const SECRET_NAME = /token|secret|apikey|password/i;

function toIssue(path: string, error: ValueError): ConfigIssue {
  if (error.type === ValueErrorType.ObjectAdditionalProperties) return unknownSettingIssue(path, error);
  return { path, expected: describeSchema(error.schema), got: describeConfigValue(path, error.value) };
}

/** `prefix` plus a JSON pointer: `.key`, `[0]` for array items, `["odd key"]` for other keys. */
function joinPath(prefix: string, pointer: string, root: unknown): string {
  let path = prefix;
  let node: unknown = root;
  for (const raw of pointer.split('/').slice(1)) {
    const segment = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(node) && /^\d+$/.test(segment)) path += `[${segment}]`;
    else if (/^[A-Za-z_$][\w$-]*$/.test(segment)) path += path === '' ? segment : `.${segment}`;
    else path += `[${JSON.stringify(segment)}]`;
    node = typeof node === 'object' && node !== null ? (node as Record<string, unknown>)[segment] : undefined;
  }
  return path === '' ? '(root)' : path;
}

/** Words for what a schema accepts. */
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
  if (s.const !== undefined) return JSON.stringify(s.const);
  switch (s.type) {
    case 'integer':
    case 'number':
      return `${s.type}${describeRange(s)}`;
    case 'string': {
      const base = typeof s.minLength === 'number' && s.minLength > 0 ? 'a non-empty string' : 'a string';
      const max = typeof s.maxLength === 'number' ? ` of at most ${s.maxLength} characters` : '';
      const pattern = typeof s.pattern === 'string' ? ` matching ${s.pattern}` : '';
      return `${base}${max}${pattern}`;
    }
    case 'boolean':
      return 'true or false';
    case 'array':
      return typeof s.minItems === 'number' && s.minItems > 0
        ? `an array with at least ${s.minItems} item${s.minItems === 1 ? '' : 's'}`
        : 'an array';
    case 'object':
      return 'an object';
    default:
      return 'a valid value';
  }
}

function describeRange(s: Record<string, unknown>): string {
  const min = typeof s.minimum === 'number' ? s.minimum : undefined;
  const max = typeof s.maximum === 'number' ? s.maximum : undefined;
  if (min !== undefined && max !== undefined) return ` ${min}..${max}`;
  if (min !== undefined) return ` >= ${min}`;
  if (typeof s.exclusiveMinimum === 'number') return ` > ${s.exclusiveMinimum}`;
  if (max !== undefined) return ` <= ${max}`;
  return '';
}
