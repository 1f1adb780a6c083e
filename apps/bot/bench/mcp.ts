// Bench of the MCP server (issue 35): `colloquy start` as a child process (SQLite store in a temp dir),
// a token from `colloquy mcp token create`, and the SDK's v2 client calling sessions_list over
// Streamable HTTP at /mcp. Each call is one HTTP request served by a fresh server (stateless), with
// the bearer check against the Store. BENCH_MCP_CALLS sets the measured calls (default 500).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { startBenchApp } from './e2e/app-child.js';
import { quantile } from './e2e/stats.js';

const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const calls = Number(process.env.BENCH_MCP_CALLS ?? 500);
const warmup = 50;

const app = await startBenchApp({ config: { tools: { sessions: { visibility: 'agent' } } } });
try {
  const created = execFileSync(
    process.execPath,
    [
      CLI,
      'mcp',
      'token',
      'create',
      '--name',
      'bench',
      '--scopes',
      'read',
      '--visibility',
      'agent',
      '--state-dir',
      app.stateDir,
    ],
    { cwd: app.dir, env: { PATH: process.env.PATH ?? '', HOME: app.dir }, encoding: 'utf8' },
  );
  const token = created.split('\n')[0]!.trim();
  const run = JSON.parse(readFileSync(join(app.stateDir, 'run.json'), 'utf8')) as { gatewayUrl: string };
  const url = new URL('/mcp', run.gatewayUrl.replace(/^ws:/, 'http:'));
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(url, {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  const times: number[] = [];
  for (let i = 0; i < warmup + calls; i++) {
    const started = performance.now();
    const result = await client.callTool({ name: 'sessions_list', arguments: {} });
    const elapsed = performance.now() - started;
    if (result.isError) throw new Error(`sessions_list failed: ${JSON.stringify(result.content)}`);
    if (i >= warmup) times.push(elapsed);
  }
  await client.close();
  const ms = (q: number) => quantile(times, q).toFixed(2);
  console.log(
    `MCP sessions_list over Streamable HTTP (v2 client, ${calls} calls after ${warmup} warm-up): p50 ${ms(0.5)} ms, p99 ${ms(0.99)} ms (target p50 <= 15 ms)`,
  );
} finally {
  await app.stop();
}
