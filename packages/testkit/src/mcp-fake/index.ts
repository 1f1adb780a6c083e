// @colloquy/testkit/mcp-fake: a local MCP server built with the official SDK, over stdio (a program
// run with `node`) and over Streamable HTTP on 127.0.0.1, with scriptable tools and fault modes.
// Needs the optional peer dependency @modelcontextprotocol/server.

export {
  FAKE_MCP_BIG_RESULT_BYTES,
  type FakeMcpCall,
  type FakeMcpTool,
  type FakeMcpToolResult,
} from './fake-mcp-tools.js';
export {
  type FakeMcpHttpServer,
  type FakeMcpHttpServerOptions,
  startFakeMcpHttpServer,
} from './http-host.js';
export { FAKE_MCP_STDIO_SERVER } from './stdio-path.js';
