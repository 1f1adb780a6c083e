/**
 * Loading a config: fill defaults, validate against `ColloquyConfigSchema`, and report every bad
 * setting at once with its path, what was expected and what was found.
 */
import { Value } from '@sinclair/typebox/value';
import { ColloquyError } from '../errors/colloquy-error.js';
import { type ConfigIssue, formatIssue } from './config-issue.js';
import { type ColloquyConfig, ColloquyConfigSchema } from './schema.js';
import { describeConfigValue, schemaIssues } from './schema-issues.js';

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
    return {
      ok: false,
      issues: [{ path: '(root)', expected: 'an object', got: describeConfigValue('', input) }],
    };
  }
  const candidate: unknown = Value.Default(ColloquyConfigSchema, Value.Clone(input ?? {}));
  const issues = schemaIssues(ColloquyConfigSchema, candidate);
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
