#!/usr/bin/env node
// Packed install proof: packs @colloquy/core, @colloquy/markdown, @colloquy/plugin-whatsapp,
// @colloquy/plugin-slack and @colloquy/testkit as they
// would be published, installs the tarballs with plain `npm i` in an empty folder outside the
// workspace (so no pnpm overrides and no workspace links help), then loads the plugins, and the
// testkit's scripted model without vitest or the runtime, with node. A third party's
// `npm i @colloquy/plugin-whatsapp` (or plugin-slack) fails the same way this does.
//
// Usage: node scripts/packed-install.mjs [--keep]   (needs `pnpm build` first; run by .ci/run)

import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const packages = [
  'packages/core',
  'packages/markdown',
  'plugins/whatsapp',
  'plugins/slack',
  'packages/testkit',
];
const keep = process.argv.includes('--keep');
const work = mkdtempSync(join(tmpdir(), 'colloquy-packed-'));
const tarballs = join(work, 'tarballs');
const app = join(work, 'app');

const run = (cmd, args, cwd, timeoutMs = 180_000) =>
  execFileSync(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs, encoding: 'utf8' });

function fail(step, error) {
  const out = [error.stdout, error.stderr].filter(Boolean).join('\n').trim().split('\n').slice(-25);
  console.error(`packed install: ${step} failed\n${out.join('\n') || error.message}`);
  console.error('packed install: 0 passed, 1 failed');
  if (keep) console.error(`work folder kept: ${work}`);
  else rmSync(work, { recursive: true, force: true });
  process.exit(1);
}

try {
  for (const pkg of packages) {
    if (!existsSync(join(root, pkg, 'dist'))) {
      fail(`packing ${pkg}`, new Error(`${pkg}/dist is missing; run \`pnpm build\` first`));
    }
    try {
      run('pnpm', ['pack', '--pack-destination', tarballs], join(root, pkg));
    } catch (error) {
      fail(`pnpm pack in ${pkg}`, error);
    }
  }
  const files = readdirSync(tarballs)
    .filter((f) => f.endsWith('.tgz'))
    .map((f) => join(tarballs, f));
  run('mkdir', ['-p', app], work);
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({ name: 'packed-app', private: true, type: 'module' }),
  );
  try {
    // A fresh cache folder: nothing the workspace installed can stand in for the registry.
    run('npm', ['i', '--no-audit', '--no-fund', '--cache', join(work, 'npm-cache'), ...files], app);
  } catch (error) {
    fail('npm i of the packed tarballs', error);
  }
  const probe = [
    "const m = await import('@colloquy/plugin-whatsapp');",
    "if (typeof m.createWhatsAppPlugin !== 'function') throw new Error('createWhatsAppPlugin is missing');",
    "const p = m.createWhatsAppPlugin({ config: {}, stateDir: './wa-state', qrOutput: false });",
    "if (p.id !== 'whatsapp') throw new Error('unexpected plugin id ' + p.id);",
    "console.log('loaded @colloquy/plugin-whatsapp: ' + Object.keys(m).length + ' exports');",
    "const slack = await import('@colloquy/plugin-slack');",
    "const s = slack.createSlackPlugin({ config: { accounts: [{ botToken: 'xoxb-1', appToken: 'xapp-1' }] } });",
    "if (s.id !== 'slack' || s.capabilities.markdown !== 'slack-mrkdwn') throw new Error('unexpected slack plugin ' + s.id);",
    "console.log('loaded @colloquy/plugin-slack: ' + Object.keys(slack).length + ' exports');",
    // The testkit's root needs neither vitest nor the runtime (optional peers, not installed here).
    "const { createScriptedModel } = await import('@colloquy/testkit');",
    "const model = createScriptedModel(['Hello']);",
    'const events = [];',
    "for await (const e of model.streamTurn({ model: 'm', system: '', messages: [], tools: [] })) events.push(e.type);",
    "if (!events.includes('finish')) throw new Error('scripted model did not finish: ' + events.join(','));",
    "for (const absent of ['vitest', '@colloquy/runtime']) {",
    "  if (await import(absent).then(() => true, () => false)) throw new Error(absent + ' is installed; the probe proves nothing');",
    '}',
    "console.log('loaded @colloquy/testkit without vitest or @colloquy/runtime: ' + events.join(','));",
  ].join('\n');
  try {
    process.stdout.write(run('node', ['--input-type=module', '-e', probe], app, 60_000));
  } catch (error) {
    fail('importing the installed packages', error);
  }
  console.log('packed install: 3 passed, 0 failed');
} finally {
  if (!keep) rmSync(work, { recursive: true, force: true });
}
