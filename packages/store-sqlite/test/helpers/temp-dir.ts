import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A temporary directory for one test file, removed by `cleanup()`. */
export function createTempDir(prefix = 'colloquy-sqlite-'): {
  dir: string;
  file: (name: string) => string;
  cleanup: () => void;
} {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  let counter = 0;
  return {
    dir,
    file: (name: string) => join(dir, `${counter++}-${name}`),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
