#!/usr/bin/env node
// `pnpm start`, step one: builds the app and the packages it uses (turbo, cached), quietly. The turbo
// output is shown only when the build fails. Step two, in the root package.json, runs the app itself.
import { spawnSync } from 'node:child_process';

process.stderr.write('Building Colloquy (cached after the first start)...\n');
const build = spawnSync('turbo', ['run', 'build', '--filter=colloquy...', '--output-logs=errors-only'], {
  stdio: ['ignore', 'pipe', 'pipe'],
  encoding: 'utf8',
});
if (build.error || build.status !== 0) {
  process.stderr.write(`${build.stdout ?? ''}${build.stderr ?? ''}`);
  process.stderr.write(`The build failed${build.error ? `: ${build.error.message}` : ''}.\n`);
  process.exit(build.status || 1);
}
