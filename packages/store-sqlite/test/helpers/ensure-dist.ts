import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

function newestSourceMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSourceMtime(path));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')) {
      newest = Math.max(newest, statSync(path).mtimeMs);
    }
  }
  return newest;
}

/**
 * Child processes run plain JavaScript from `dist/`. Turbo builds it before `test`; when the
 * suite runs on its own and `dist/` is missing or older than `src/`, build it here.
 */
export function ensureDist(): void {
  const entry = join(packageDir, 'dist', 'index.js');
  if (existsSync(entry) && statSync(entry).mtimeMs >= newestSourceMtime(join(packageDir, 'src'))) return;
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: packageDir, stdio: 'inherit' });
}

/** The absolute path of a fixture script in `test/fixtures`. */
export function fixture(name: string): string {
  return join(packageDir, 'test', 'fixtures', name);
}
