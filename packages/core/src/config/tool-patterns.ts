/**
 * Tool allow lists: names or patterns where `*` matches any run of characters (`github__*`,
 * `*__search`, `*`). Used for `agents.list[].tools.allow`.
 */

const compiled = new Map<string, RegExp>();

function patternRegExp(pattern: string): RegExp {
  let regexp = compiled.get(pattern);
  if (regexp === undefined) {
    const source = pattern
      .split('*')
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*');
    regexp = new RegExp(`^${source}$`);
    if (compiled.size >= 1024) compiled.clear();
    compiled.set(pattern, regexp);
  }
  return regexp;
}

/**
 * Whether a tool name is allowed by a list of names and `*` patterns.
 *
 * @param name - the tool name, e.g. `github__create_issue`
 * @param patterns - the allow list, e.g. `["github__*"]` (empty: nothing is allowed)
 * @returns true when some pattern matches the whole name
 * @example
 * ```ts
 * isToolAllowed('github__create_issue', ['github__*']); // true
 * isToolAllowed('fs__read', ['github__*']); // false
 * ```
 */
export function isToolAllowed(name: string, patterns: readonly string[]): boolean {
  return patterns.some((pattern) => patternRegExp(pattern).test(name));
}
