// Reference app start-up and idle memory, web chat only (the issue's targets: ready <= 1.5 s, RSS <= 100 MB).
// Starts `node dist/cli.js start` on a temp state dir, measures the time to the first successful GET of
// the chat page, waits for the process to settle, and reads VmRSS from /proc/<pid>/status.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const IDLE_MS = 2000;
const TARGET_READY_MS = 1500;
const TARGET_RSS_MB = 100;

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function rssMb(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)\s+kB/.exec(status)?.[1] ?? Number.NaN);
  return kb / 1024;
}

async function once() {
  const dir = mkdtempSync(join(tmpdir(), 'colloquy-bench-'));
  const [webPort, gatewayPort] = [await freePort(), await freePort()];
  const config = join(dir, 'colloquy.json5');
  writeFileSync(
    config,
    JSON.stringify({ gateway: { port: gatewayPort }, channels: { webchat: { port: webPort } } }),
  );
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [CLI, 'start', '--config', config, '--state-dir', join(dir, 'state'), '--log-format', 'json'],
    {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '', HOME: dir },
      stdio: 'ignore',
    },
  );
  let readyMs;
  const deadline = started + 15_000;
  while (readyMs === undefined && performance.now() < deadline) {
    try {
      const res = await fetch(`http://127.0.0.1:${webPort}/`);
      await res.arrayBuffer();
      if (res.ok) readyMs = performance.now() - started;
    } catch {
      await sleep(10);
    }
  }
  await sleep(IDLE_MS);
  const rss = rssMb(child.pid);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGINT');
  await exited;
  rmSync(dir, { recursive: true, force: true });
  if (readyMs === undefined) throw new Error('the app never served its page');
  return { readyMs, rss };
}

const results = [];
for (let i = 0; i < RUNS; i++) results.push(await once());
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ready = median(results.map((r) => r.readyMs));
const rss = median(results.map((r) => r.rss));
const mark = (ok) => (ok ? 'ok' : 'OVER TARGET');
console.log(`colloquy app, web chat only (${RUNS} runs, median)`);
console.log(
  `  ready (first GET of the page): ${ready.toFixed(0)} ms   target <= ${TARGET_READY_MS} ms   ${mark(ready <= TARGET_READY_MS)}`,
);
console.log(
  `  idle RSS after ${IDLE_MS / 1000} s:          ${rss.toFixed(1)} MB   target <= ${TARGET_RSS_MB} MB   ${mark(rss <= TARGET_RSS_MB)}`,
);
console.log(
  `  runs: ${results.map((r) => `${r.readyMs.toFixed(0)} ms / ${r.rss.toFixed(1)} MB`).join(', ')}`,
);
