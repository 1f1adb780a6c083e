/**
 * Loading a config: fill defaults, validate against `ColloquyConfigSchema`, and report every bad
 * setting at once with its path, what was expected and what was found.
 */
import type { TSchema } from '@sinclair/typebox';
import { Value, type ValueError, ValueErrorType } from '@sinclair/typebox/value';
import { ColloquyError } from '../errors/colloquy-error.js';
import { type ConfigIssue, formatIssue, unknownSettingIssue } from './config-issue.js';
import { type ColloquyConfig, ColloquyConfigSchema } from './schema.js';

/** The outcome of `checkConfig`. */
export type ConfigCheckResult = { ok: true; config: ColloquyConfig } | { ok: false; issues: ConfigIssue[] };

/**
 * Validates a config without throwing: fills defaults, then checks every setting.
 *
 * @param input - the parsed config (an object, usually from JSON5); `undefined` means all defaults
 * @returns `{ ok: true, config }` with the resolved config (a fresh object; `input` is never modified),
 *   or `{ ok: false, issues }` listing every bad setting
 *
 * @example
 * ```ts
 * const checked = checkConfig({ tools: { sessions: { visibility: 'everyone' } } });
 * if (!checked.ok) for (const i of checked.issues) console.log(`${i.path}: expected ${i.expected}, got ${i.got}`);
 * ```
 */
export function checkConfig(input: unknown): ConfigCheckResult {
  if (input !== undefined && !isPlainObject(input)) {
    return { ok: false, issues: [{ path: '(root)', expected: 'an object', got: describeValue('', input) }] };
  }
  const candidate: unknown = Value.Default(ColloquyConfigSchema, Value.Clone(input ?? {}));
  const issues = collectSchemaIssues(candidate);
  issues.push(...collectCrossFieldIssues(candidate));
  if (issues.length > 0) return { ok: false, issues };
  return { ok: true, config: candidate as ColloquyConfig };
}

/**
 * Resolves a user config: fills every default (deeply), validates, and returns the full config.
 *
 * @param input - the parsed config, any subset of `ColloquyConfigInput`; `undefined` means all defaults
 * @returns the resolved `ColloquyConfig` (a fresh object; `input` is never modified)
 * @throws ColloquyError `CONFIG_INVALID` when any setting is wrong; the message lists every bad path as
 *   `path: expected X, got Y` and `details.issues` holds them as `ConfigIssue[]`
 *
 * @example
 * ```ts
 * const config = resolveConfig({ session: { dmScope: 'per-peer' }, tools: { sessions: { visibility: 'agent' } } });
 * config.session.mainKey; // 'main'
 * ```
 */
export function resolveConfig(input: unknown): ColloquyConfig {
  const checked = checkConfig(input);
  if (checked.ok) return checked.config;
  throw new ColloquyError('CONFIG_INVALID', formatIssues(checked.issues), { issues: checked.issues });
}

/**
 * The resolved defaults (what `resolveConfig({})` returns), deeply frozen. Copy before changing.
 */
export const DEFAULT_CONFIG: Readonly<ColloquyConfig> = deepFreeze(resolveConfig({}));

/**
 * Renders issues as the `CONFIG_INVALID` message: one line per issue and what to do next.
 *
 * @param issues - the issues from `checkConfig`
 * @returns a multi-line message
 */
export function formatIssues(issues: readonly ConfigIssue[]): string {
  const lines = issues.map((i) => `  - ${formatIssue(i)}`);
  const count = issues.length === 1 ? '1 problem' : `${issues.length} problems`;
  return `Invalid Colloquy config (${count}):\n${lines.join('\n')}\nFix these settings in your config file and start again.`;
}

// --- schema issues ---

function collectSchemaIssues(value: unknown): ConfigIssue[] {
  const byPath = new Map<string, ConfigIssue>();
  for (const error of Value.Errors(ColloquyConfigSchema, value)) {
    const issue = toIssue(error, value);
    if (!byPath.has(issue.path)) byPath.set(issue.path, issue);
  }
  return [...byPath.values()];
}

function toIssue(error: ValueError, root: unknown): ConfigIssue {
  const segments = pointerSegments(error.path);
  const path = formatPath(segments, root);
  if (error.type === ValueErrorType.ObjectAdditionalProperties) {
    return unknownSettingIssue(path, error);
  }
  return { path, expected: describeSchema(error.schema), got: describeValue(path, error.value) };
}

function pointerSegments(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function formatPath(segments: readonly string[], root: unknown): string {
  let out = '';
  let node: unknown = root;
  for (const segment of segments) {
    if (Array.isArray(node) && /^\d+$/.test(segment)) out += `[${segment}]`;
    else if (/^[A-Za-z_$][\w$-]*$/.test(segment)) out += out === '' ? segment : `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
    node =
      isPlainObject(node) || Array.isArray(node) ? (node as Record<string, unknown>)[segment] : undefined;
  }
  return out === '' ? '(root)' : out;
}

/** Words for what a schema accepts. */
function describeSchema(schema: TSchema): string {
  const s = schema as TSchema & Record<string, unknown>;
  if (typeof s['x-expected'] === 'string') return s['x-expected'];
  if (Array.isArray(s.anyOf)) {
    const literals = (s.anyOf as TSchema[]).map((v) => (v as { const?: unknown }).const);
    if (literals.every((l) => l !== undefined))
      return `one of ${literals.map((l) => JSON.stringify(l)).join(' | ')}`;
    return (s.anyOf as TSchema[]).map(describeSchema).join(' or ');
  }
  if (s.const !== undefined) return JSON.stringify(s.const);
  switch (s.type) {
    case 'integer':
    case 'number': {
      const min = typeof s.minimum === 'number' ? s.minimum : undefined;
      const max = typeof s.maximum === 'number' ? s.maximum : undefined;
      const range =
        min !== undefined && max !== undefined ? ` ${min}..${max}` : min !== undefined ? ` >= ${min}` : '';
      return `${s.type}${range}`;
    }
    case 'string':
      return typeof s.minLength === 'number' && s.minLength > 0 ? 'a non-empty string' : 'a string';
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

const SECRET_NAME = /token|secret|apikey|password/i;

/** Words for a value found in the config. Values of secret-looking settings are not echoed. */
function describeValue(path: string, value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') {
    if (SECRET_NAME.test(path)) return 'a string (value hidden)';
    const shown = value.length > 60 ? `${value.slice(0, 57)}...` : value;
    return JSON.stringify(shown);
  }
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return typeof value;
}

// --- cross-field issues ---

function collectCrossFieldIssues(candidate: unknown): ConfigIssue[] {
  const agents =
    isPlainObject(candidate) && isPlainObject(candidate.agents) ? candidate.agents.list : undefined;
  if (!Array.isArray(agents)) return [];
  const issues: ConfigIssue[] = [];
  const seen = new Map<string, number>();
  let firstDefault: number | undefined;
  agents.forEach((agent: unknown, index) => {
    if (!isPlainObject(agent)) return;
    if (typeof agent.id === 'string') {
      const first = seen.get(agent.id);
      if (first === undefined) seen.set(agent.id, index);
      else
        issues.push({
          path: `agents.list[${index}].id`,
          expected: `an id not used by another agent (agents.list[${first}] is already "${agent.id}")`,
          got: JSON.stringify(agent.id),
        });
    }
    if (agent.default === true) {
      if (firstDefault === undefined) firstDefault = index;
      else
        issues.push({
          path: `agents.list[${index}].default`,
          expected: `at most one default agent (agents.list[${firstDefault}] is already the default)`,
          got: 'true',
        });
    }
  });
  return issues;
}

// --- helpers ---

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
