#!/usr/bin/env node
// `pnpm test`: runs turbo's test and api tasks, passes their output through as it comes, and ends
// with a summary: the tests counted from every vitest run (cached runs included, turbo replays
// their logs) and every suite that was skipped, with its reason. A test file announces a skipped
// suite with a line holding "skipped: <reason>" (the browser suites without Chromium do), so the
// skip shows at the end and not only somewhere in a long log. The exit code is turbo's.
//
// Usage: pnpm test [-- more turbo arguments, e.g. --filter @colloquy/core]

import { spawn } from 'node:child_process';

const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');
const TASK_LINE = /^(\S+?):(?:test|api): (.*)$/;
const SKIP_NOTE = /\bskipped: (.+)$/;
const VITEST_TOTALS = /^\s*Tests\s+(.+?)\s+\(\d+\)\s*$/;

const totals = { passed: 0, failed: 0, skipped: 0 };
const skips = [];

function read(line) {
  const task = TASK_LINE.exec(line.replace(ANSI, ''));
  if (!task) return;
  const [, pkg, text] = task;
  const note = SKIP_NOTE.exec(text);
  if (note) skips.push(`${pkg}: ${text.trim()}`);
  const counts = VITEST_TOTALS.exec(text);
  if (!counts) return;
  for (const part of counts[1].split('|')) {
    const [, n, kind] = /(\d+) (passed|failed|skipped|todo)/.exec(part) ?? [];
    if (kind === 'todo') totals.skipped += Number(n);
    else if (kind) totals[kind] += Number(n);
  }
}

function follow(stream, out) {
  let rest = '';
  stream.on('data', (chunk) => {
    out.write(chunk);
    const lines = (rest + chunk.toString('utf8')).split('\n');
    rest = lines.pop() ?? '';
    for (const line of lines) read(line);
  });
  stream.on('end', () => read(rest));
}

// `pnpm test -- --filter x` hands the script a leading `--`, which turbo would pass on to the tasks.
const extra = process.argv.slice(2);
if (extra[0] === '--') extra.shift();
const args = [
  'run',
  'test',
  'api',
  '--concurrency=2',
  ...(process.stdout.isTTY ? ['--color'] : []),
  ...extra,
];
const turbo = spawn('turbo', args, { stdio: ['inherit', 'pipe', 'pipe'] });
turbo.on('error', (error) => {
  console.error(`run-tests: could not start turbo (${error.message}); run it as \`pnpm test\`.`);
  process.exit(1);
});
follow(turbo.stdout, process.stdout);
follow(turbo.stderr, process.stderr);
turbo.on('close', (code, signal) => {
  console.log(`\ntests: ${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`);
  if (skips.length > 0) {
    console.log(`suites skipped (${skips.length}):`);
    for (const skip of new Set(skips)) console.log(`  ${skip}`);
  }
  process.exit(code ?? (signal ? 1 : 0));
});
