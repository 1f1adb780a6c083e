#!/usr/bin/env node
// Publishability proof without publishing: for every public package of the workspace, `pnpm publish
// --dry-run` packs it as it would be published (workspace:* ranges become the exact version) and
// publint checks the packed package.json, exports and files. The registry setting points at a closed
// port on 127.0.0.1, so a dry run that tried to reach a registry fails here instead of going online.
// (`pnpm -r publish --dry-run` asks the registry which versions exist, so each package is published
// on its own.)
//
// It also reads every pending changeset as `changeset version` will: a front matter that does not
// parse (a missing closing `---`, an unknown package, a bump that is not major, minor or patch) would
// stop the next release, so it fails here, when the changeset is added.
//
// Usage: node scripts/publish-dry-run.mjs   (needs `pnpm build` first; run by .ci/run)

import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const offline = { ...process.env, npm_config_registry: 'http://127.0.0.1:9/', npm_config_fetch_retries: '0' };
const listed = JSON.parse(
  execFileSync('pnpm', ['-r', 'ls', '--depth', '-1', '--json'], { cwd: root, encoding: 'utf8' }),
);
const packages = listed.filter((p) => p.path !== root && !p.private);

let failed = 0;

const FRONT_MATTER = /^---\n((?:["']?[@\w/.-]+["']?: (?:major|minor|patch)\n)+)---\n+\S/;
const names = new Set(listed.map((p) => p.name));
const changesetDir = join(root, '.changeset');
const changesets = readdirSync(changesetDir).filter((file) => file.endsWith('.md') && file !== 'README.md');
for (const file of changesets) {
  const text = readFileSync(join(changesetDir, file), 'utf8').replace(/\r\n/g, '\n');
  const front = FRONT_MATTER.exec(text);
  const unknown = front?.[1]
    .trim()
    .split('\n')
    .map((line) => line.slice(0, line.lastIndexOf(':')).replace(/["']/g, ''))
    .filter((name) => !names.has(name));
  if (!front || unknown.length > 0) {
    console.error(
      `publish dry run: .changeset/${file}: ${front ? `unknown package ${unknown.join(', ')}` : 'the front matter does not parse'} ` +
        '(expected "---", lines \'"<package>": major|minor|patch\', "---", then the summary)',
    );
    failed++;
  }
}
console.log(
  `publish dry run: ${changesets.length - failed} of ${changesets.length} pending changesets parse`,
);

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
