/**
 * Config issues: the shape every config check reports (core, the app and each channel plugin), the
 * issue for a setting the schema does not know, and the one-line wording of an issue.
 */
import type { TSchema } from '@sinclair/typebox';

/** One problem found in a config. */
export interface ConfigIssue {
  /** Dotted path of the setting, e.g. `session.agentToAgent.maxPingPongTurns` or `agents.list[1].id`. */
  path: string;
  /** What the setting accepts, in words, e.g. `integer 0..5`. */
  expected: string;
  /** What was found, e.g. `9`, `"tre"`, `unknown setting`, `nothing`. */
  got: string;
  /** For an unknown setting: the settings allowed at that place, in schema order. */
  allowed?: string[];
  /** For an unknown setting: the allowed setting closest to what was written, if one is close. */
  suggestion?: string;
}

/**
 * The issue for a key that a strict object schema does not know, listing the keys allowed there and
 * suggesting the closest one (a typo or a case slip, e.g. `gatewayURL` for `gatewayUrl`).
 *
 * `schemaIssues` and `resolveSection` use it for every unknown key; call it yourself only where you
 * turn TypeBox errors into issues by hand.
 *
 * @param path - the path of the unknown key, formatted as the caller formats paths
 * @param error - the TypeBox error: its JSON pointer `path` ends with the unknown key, its `schema`
 *   is the object (or record) that refused it
 * @returns the issue; `allowed` and `suggestion` are set when the schema lists its keys
 * @example
 * ```ts
 * for (const error of Value.Errors(schema, value))
 *   if (error.type === ValueErrorType.ObjectAdditionalProperties) issues.push(unknownSettingIssue(toPath(error.path), error));
 * // formatIssue(issue): 'channels.discord.accounts[0].gatewayURL: unknown setting; allowed: ...; did you mean "gatewayUrl"?'
 * ```
 */
export function unknownSettingIssue(path: string, error: { path: string; schema: TSchema }): ConfigIssue {
  const key = (error.path.split('/').at(-1) ?? '').replace(/~1/g, '/').replace(/~0/g, '~');
  const s = error.schema as TSchema & { properties?: Record<string, unknown>; patternProperties?: object };
  if (s.properties === undefined) {
    const pattern = Object.keys(s.patternProperties ?? {})[0];
    return {
      path,
      expected: pattern === undefined ? 'no key here' : `a key matching ${pattern}`,
      got: JSON.stringify(key),
    };
  }
  const allowed = Object.keys(s.properties);
  const suggestion = closestKey(key, allowed);
  const hint = suggestion === undefined ? '' : `; did you mean "${suggestion}"?`;
  return {
    path,
    expected: `one of the allowed settings (${allowed.join(', ')})${hint}`,
    got: 'unknown setting',
    allowed,
    ...(suggestion === undefined ? {} : { suggestion }),
  };
}

/**
 * One issue as one line: `path: expected X, got Y`, or for an unknown setting
 * `path: unknown setting; allowed: a, b, c; did you mean "b"?`.
 *
 * @param issue - an issue from any config check
 * @returns the line, without a trailing period
 */
export function formatIssue(issue: ConfigIssue): string {
  if (issue.allowed === undefined) return `${issue.path}: expected ${issue.expected}, got ${issue.got}`;
  const hint = issue.suggestion === undefined ? '' : `; did you mean "${issue.suggestion}"?`;
  const allowed = issue.allowed.length === 0 ? 'nothing' : issue.allowed.join(', ');
  return `${issue.path}: unknown setting; allowed: ${allowed}${hint}`;
}

/** The candidate closest to a typo (edit distance <= 2, ignoring case), if any. */
function closestKey(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = 3;
  for (const candidate of candidates) {
    const d = editDistance(word.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2) return 3;
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
