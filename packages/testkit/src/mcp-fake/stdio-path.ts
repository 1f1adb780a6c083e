import { fileURLToPath } from 'node:url';

/**
 * The path of the fake MCP server's stdio program (run it with `node`). Configure it as a stdio
 * server: `{ command: process.execPath, args: [FAKE_MCP_STDIO_SERVER] }`. Its flags: `--name`,
 * `--stderr <text>`, `--exit-at-start <code>`, `--tool <name>` (see the testkit README).
 */
export const FAKE_MCP_STDIO_SERVER: string = fileURLToPath(new URL('./stdio-host.js', import.meta.url));
