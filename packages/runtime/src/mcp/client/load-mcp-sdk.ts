/**
 * The MCP SDK, loaded on first use: a runtime without MCP servers (or before a run needs one) does
 * not pay for importing it.
 */
type ClientModule = typeof import('@modelcontextprotocol/client');
type StdioModule = typeof import('@modelcontextprotocol/client/stdio');

/** The parts of the SDK's client package the MCP connection uses. */
export interface McpSdk {
  client: ClientModule;
  stdio: StdioModule;
}

let loading: Promise<McpSdk> | undefined;

/**
 * Imports the SDK once.
 *
 * @returns its client and stdio modules
 */
export function loadMcpSdk(): Promise<McpSdk> {
  loading ??= Promise.all([
    import('@modelcontextprotocol/client'),
    import('@modelcontextprotocol/client/stdio'),
  ]).then(([client, stdio]) => ({ client, stdio }));
  return loading;
}
