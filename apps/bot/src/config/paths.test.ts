import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { invocationDir, locateConfigFile } from './paths.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'colloquy-paths-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('invocationDir', () => {
  it('prefers where turbo was invoked, then where the package manager was, then the cwd', () => {
    expect(invocationDir({ TURBO_INVOCATION_DIR: dir, INIT_CWD: '/' }, '/tmp')).toBe(dir);
    expect(invocationDir({ INIT_CWD: dir }, '/tmp')).toBe(dir);
    expect(invocationDir({}, '/tmp')).toBe('/tmp');
  });

  it('ignores relative or missing directories', () => {
    expect(invocationDir({ TURBO_INVOCATION_DIR: 'relative', INIT_CWD: join(dir, 'gone') }, dir)).toBe(dir);
  });
});

describe('locateConfigFile', () => {
  it('uses the flag, then COLLOQUY_CONFIG, then colloquy.json5 when it exists, else nothing', () => {
    expect(locateConfigFile('a.json5', dir, { COLLOQUY_CONFIG: 'b.json5' })).toBe(join(dir, 'a.json5'));
    expect(locateConfigFile(undefined, dir, { COLLOQUY_CONFIG: 'b.json5' })).toBe(join(dir, 'b.json5'));
    expect(locateConfigFile(undefined, dir, {})).toBeUndefined();
    writeFileSync(join(dir, 'colloquy.json5'), '{}');
    expect(locateConfigFile(undefined, dir, {})).toBe(join(dir, 'colloquy.json5'));
  });
});
