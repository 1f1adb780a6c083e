import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '@colloquy/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadBotConfig } from '../config/load-config.js';
import { openBotStore } from './open-store.js';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'colloquy-open-store-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** A logger that keeps its warnings. */
function warningsLogger(): { log: Logger; warnings: string[] } {
  const warnings: string[] = [];
  const log: Logger = {
    debug: () => {},
    info: () => {},
    warn: (_fields, message) => warnings.push(String(message)),
    error: () => {},
    child: () => log,
  };
  return { log, warnings };
}

async function open(stateDir: string, log: Logger) {
  const loaded = await loadBotConfig({ stateDir, env: {}, baseDir: root });
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.issues));
  // Opening migrates the schema, so SQLite has written its log and shared-memory files too.
  return openBotStore(loaded.config, log);
}

describe('openBotStore (SQLite)', () => {
  it('creates a fresh database and its companions 0600 and warns about nothing', async () => {
    const stateDir = join(root, 'state');
    const { log, warnings } = warningsLogger();
    const store = await open(stateDir, log);
    const db = join(stateDir, 'colloquy.db');
    for (const file of [db, `${db}-wal`, `${db}-shm`]) expect(statSync(file).mode & 0o777).toBe(0o600);
    await store.close();
    expect(warnings).toEqual([]);
  });

  it('warns about a database that was already there with looser permissions', async () => {
    const stateDir = join(root, 'state');
    mkdirSync(stateDir, { mode: 0o700 });
    const db = join(stateDir, 'colloquy.db');
    writeFileSync(db, '');
    chmodSync(db, 0o644);
    const { log, warnings } = warningsLogger();
    const store = await open(stateDir, log);
    await store.close();
    expect(statSync(db).mode & 0o777).toBe(0o600);
    expect(warnings).toContain('tightened the permissions of a state file');
  });
});
