/**
 * One config section (a plugin's `channels.<id>`, the app's own sections): fill its defaults,
 * validate it against its TypeBox schema, run the checks the schema cannot express, and report every
 * problem as typed issues.
 */
import type { Static, TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { ColloquyError } from '../errors/colloquy-error.js';
import { type ConfigIssue, formatIssue } from './config-issue.js';
import { schemaIssues } from './schema-issues.js';

/** Options of {@link checkSection} and {@link resolveSection}. */
export interface SectionOptions<T> {
  /** Where the section lives in the config file, e.g. `channels.telegram`; every issue path starts with it. */
  path: string;
  /** What the section configures, for the error message, e.g. `Telegram`. Default: `path`. */
  label?: string;
  /**
   * Checks the schema cannot express (unique ids, fields required together), run on the
   * schema-valid section with its defaults. Issue paths are full paths (start with `path`).
   */
  check?: (section: T) => ConfigIssue[];
}

/** The outcome of {@link checkSection}: the resolved section, or every issue found. */
export type SectionCheck<T> = { ok: true; value: T } | { ok: false; issues: ConfigIssue[] };

/**
 * Validates one config section without throwing: fills its defaults (deeply), checks it against the
 * schema, then runs `options.check`. `undefined` and `null` mean "not written": all defaults.
 *
 * @param schema - the section's TypeBox schema (with `default`s)
 * @param input - the raw section (parsed JSON5, or options from code); never modified
 * @param options - the section's path, label and extra checks
 * @returns `{ ok: true, value }` with a fresh resolved section, or `{ ok: false, issues }`
 * @example
 * ```ts
 * const checked = checkSection(TelegramConfigSchema, raw.channels?.telegram, { path: 'channels.telegram' });
 * if (!checked.ok) for (const issue of checked.issues) console.log(formatIssue(issue));
 * ```
 */
export function checkSection<S extends TSchema>(
  schema: S,
  input: unknown,
  options: SectionOptions<Static<S>>,
): SectionCheck<Static<S>> {
  const value: unknown = Value.Default(schema, Value.Clone(input ?? {}));
  const issues = schemaIssues(schema, value, options.path);
  if (issues.length === 0 && options.check) issues.push(...options.check(value as Static<S>));
  return issues.length === 0 ? { ok: true, value: value as Static<S> } : { ok: false, issues };
}

/**
 * Resolves one config section: {@link checkSection}, throwing when anything is wrong. This is what a
 * plugin factory calls on its `config` option.
 *
 * @param schema - the section's TypeBox schema (with `default`s)
 * @param input - the raw section; never modified
 * @param options - the section's path, label and extra checks
 * @returns the resolved section
 * @throws ColloquyError `CONFIG_INVALID` listing every problem, one per line, with `details.issues`
 *   (`ConfigIssue[]`: path, expected, got)
 * @example
 * ```ts
 * const config = resolveSection(DiscordConfigSchema, options.config, { path: 'channels.discord', label: 'Discord' });
 * ```
 */
export function resolveSection<S extends TSchema>(
  schema: S,
  input: unknown,
  options: SectionOptions<Static<S>>,
): Static<S> {
  const checked = checkSection(schema, input, options);
  if (checked.ok) return checked.value;
  throw sectionError(checked.issues, options);
}

/**
 * The `CONFIG_INVALID` error for a section's issues (also for issues a caller finds itself).
 *
 * @param issues - at least one issue
 * @param options - the section's path and label
 * @returns the error, with `details.issues`
 */
export function sectionError(
  issues: readonly ConfigIssue[],
  options: Pick<SectionOptions<unknown>, 'path' | 'label'>,
): ColloquyError {
  const label = options.label ?? options.path;
  const count = issues.length === 1 ? '1 problem' : `${issues.length} problems`;
  const lines = issues.map((issue) => `  - ${formatIssue(issue)}`).join('\n');
  return new ColloquyError(
    'CONFIG_INVALID',
    `Invalid ${label} config (${count}):\n${lines}\nFix these settings under ${options.path} and start again.`,
    { issues: [...issues] },
  );
}
