#!/usr/bin/env node
// `pnpm colloquy ...`: the app's CLI from this repository. On a fresh clone nothing is built yet, so
// the first call builds the app and the packages it uses (as `pnpm start` does); later calls run the
// built CLI at once. After pulling changes, `pnpm start` or `pnpm build` rebuilds.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const cli = new URL('../apps/bot/dist/cli.js', import.meta.url);
if (!existsSync(fileURLToPath(cli))) {
  const build = spawnSync(process.execPath, [fileURLToPath(new URL('build-app.mjs', import.meta.url))], {
    stdio: 'inherit',
  });
  if (build.status !== 0) process.exit(build.status ?? 1);
}
await import(cli.href);
