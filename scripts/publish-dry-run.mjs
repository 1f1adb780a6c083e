#!/usr/bin/env node
// Publishability proof without publishing: for every public package of the workspace, `pnpm publish
// --dry-run` packs it as it would be published (workspace:* ranges become the exact version) and
// publint checks the packed package.json, exports and files. The registry setting points at a closed
// port on 127.0.0.1, so a dry run that tried to reach a registry fails here instead of going online.
// (`pnpm -r publish --dry-run` asks the registry which versions exist, so each package is published
// on its own.)
//
// Usage: node scripts/publish-dry-run.mjs   (needs `pnpm build` first; run by .ci/run)

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const offline = { ...process.env, npm_config_registry: 'http://127.0.0.1:9/', npm_config_fetch_retries: '0' };
const listed = JSON.parse(
  execFileSync('pnpm', ['-r', 'ls', '--depth', '-1', '--json'], { cwd: root, encoding: 'utf8' }),
);
const packages = listed.filter((p) => p.path !== root && !p.private);

let failed = 0;
for (const { name, version, path } of packages) {
  const step = (what, cmd, args) => {
    try {
      execFileSync(cmd, args, {
        cwd: path,
        env: offline,
        stdio: ['ignore', 'pipe', 'pipe'],
        timeout: 120_000,
      });
      return true;
    } catch (error) {
      const out = [error.stdout, error.stderr].filter(Boolean).join('\n').trim().split('\n').slice(-15);
      console.error(`publish dry run: ${name}: ${what} failed\n${out.join('\n') || error.message}`);
      failed++;
      return false;
    }
  };
  const manifest = JSON.parse(readFileSync(join(path, 'package.json'), 'utf8'));
  if (!manifest.repository || !manifest.bugs || !manifest.homepage || !manifest.engines?.node) {
    console.error(`publish dry run: ${name}: package.json lacks repository, bugs, homepage or engines.node`);
    failed++;
    continue;
  }
  if (!step('pnpm publish --dry-run', 'pnpm', ['publish', '--dry-run', '--no-git-checks'])) continue;
  if (!step('publint', 'pnpm', ['exec', 'publint', '--strict', '--pack', 'pnpm'])) continue;
  console.log(`publish dry run: ${name}@${version} packs and passes publint`);
}
console.log(`publish dry run: ${packages.length - failed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);
