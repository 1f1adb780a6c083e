/**
 * How MCP tools are named for the model (`<server>__<tool>`), and which servers an allow list can
 * reach at all (so only those are started).
 */

/** What separates the server name from the tool name in the names the model sees. */
export const MCP_NAME_SEPARATOR = '__';

/** The longest tool name model providers accept. */
const MAX_TOOL_NAME = 64;

/** A valid server name: lower-case letters, digits, `-`, and `_` never doubled (it would blur the separator). */
export const MCP_SERVER_NAME_PATTERN = /^[a-z0-9](?:[a-z0-9-]|_(?!_))*$/;

/**
 * The name the model sees for a server's tool: `<server>__<tool>`, with characters providers refuse
 * (anything but letters, digits, `_` and `-`) replaced by `_`.
 *
 * @param server - the server name (`mcp.servers.<name>`)
 * @param tool - the tool name the server lists
 * @returns the name, or undefined when it would be longer than 64 characters
 */
export function exposedToolName(server: string, tool: string): string | undefined {
  const name = `${server}${MCP_NAME_SEPARATOR}${tool.replace(/[^A-Za-z0-9_-]/g, '_')}`;
  return name.length <= MAX_TOOL_NAME ? name : undefined;
}

/**
 * Whether some pattern of an allow list can match a tool of `server`: its text before the first
 * `*` must agree with `<server>__` as far as both go.
 *
 * @param server - the server name
 * @param patterns - the allow list (`github__*`, `*__search`, `fs__read`)
 * @returns true when the server has to be started to know its allowed tools
 */
export function serverReachable(server: string, patterns: readonly string[]): boolean {
  const prefix = `${server}${MCP_NAME_SEPARATOR}`;
  return patterns.some((pattern) => {
    const star = pattern.indexOf('*');
    const literal = star < 0 ? pattern : pattern.slice(0, star);
    return star < 0 ? literal.startsWith(prefix) : literal.startsWith(prefix) || prefix.startsWith(literal);
  });
}
