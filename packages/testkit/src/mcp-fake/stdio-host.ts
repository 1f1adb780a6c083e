/**
 * The fake MCP server over stdio, as a program: `node <FAKE_MCP_STDIO_SERVER>` serves the fake's
 * tools on stdin/stdout with the official SDK's `serveStdio`. Its `crash` tool exits the process
 * mid-call (status 1).
 *
 * Flags:
 * - `--name <name>`: the server name it reports (default `fake-mcp-stdio`).
 * - `--stderr <text>`: writes the text to stderr once it serves (to check that stderr reaches a log).
 * - `--exit-at-start <code>`: writes a line to stderr and exits at once, before serving (a server
 *   that fails to start).
 * - `--tool <name>`: serves one more tool that answers `<name> ran` (repeatable).
 */
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { FakeMcpToolBook } from './fake-mcp-tools.js';

const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const index = args.indexOf(name);
  return index >= 0 ? args[index + 1] : undefined;
};

const exitCode = flag('--exit-at-start');
if (exitCode !== undefined) {
  process.stderr.write('fake-mcp: failing to start, as asked (--exit-at-start)\n');
  process.exit(Number(exitCode));
}

const extra = args.flatMap((arg, index) => (arg === '--tool' && args[index + 1] ? [args[index + 1]!] : []));
const book = new FakeMcpToolBook(
  flag('--name') ?? 'fake-mcp-stdio',
  () => {
    process.stderr.write('fake-mcp: crashing mid-call, as asked (crash tool)\n');
    process.exit(1);
  },
  extra.map((name) => ({ name, run: () => ({ text: `${name} ran` }) })),
);
serveStdio(() => book.buildServer());
const banner = flag('--stderr');
if (banner !== undefined) process.stderr.write(`${banner}\n`);
