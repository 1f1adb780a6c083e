// Runs the differential property suite of the session tools (test/session-tools/
// differential.property.test.ts) with a random seed and more runs than CI: the same random
// sequences of tool calls on the Memory, SQLite and PostgreSQL stores, answers compared across the
// stores and checked against the visibility model. CI runs one fixed seed; this finds what it misses.
//
// Run with `pnpm bench` at the root (it runs after the other runtime benches) or
// `pnpm --filter @colloquy/runtime bench:differential`. COLLOQUY_DIFF_SEED (default: random),
// COLLOQUY_DIFF_RUNS (default 50) and COLLOQUY_DIFF_STEPS (default 30) choose the seed, the number of
// sequences and their longest length. Exits 1 on a failure, which prints its seed and the shrunk
// sequence of calls; rerun it with COLLOQUY_DIFF_SEED=<seed>.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const vitest = join(dirname(createRequire(import.meta.url).resolve('vitest/package.json')), 'vitest.mjs');
const seed = process.env.COLLOQUY_DIFF_SEED ?? String(Math.floor(Math.random() * 2 ** 31));
const runs = process.env.COLLOQUY_DIFF_RUNS ?? '50';
const steps = process.env.COLLOQUY_DIFF_STEPS ?? '30';

console.log(`differential suite: seed ${seed}, ${runs} runs of up to ${steps} steps`);
const started = Date.now();
const result = spawnSync(
  process.execPath,
  [vitest, 'run', 'test/session-tools/differential.property.test.ts'],
  {
    cwd: packageDir,
    stdio: 'inherit',
    env: { ...process.env, COLLOQUY_DIFF_SEED: seed, COLLOQUY_DIFF_RUNS: runs, COLLOQUY_DIFF_STEPS: steps },
  },
);
console.log(
  `differential suite: seed ${seed} ${result.status === 0 ? 'passed' : 'FAILED'} in ${Math.round((Date.now() - started) / 1000)} s`,
);
process.exit(result.status ?? 1);
