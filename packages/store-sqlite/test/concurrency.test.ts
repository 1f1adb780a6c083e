import { isColloquyError } from '@colloquy/core';
import { makeSessionRecord } from '@colloquy/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../src/open-sqlite-store.js';
import { type Child, startChild } from './helpers/child.js';
import { ensureDist, fixture } from './helpers/ensure-dist.js';
import { createTempDir } from './helpers/temp-dir.js';

const temp = createTempDir('colloquy-concurrency-');
const children: Child[] = [];

beforeAll(() => ensureDist(), 60_000);
afterAll(() => {
  for (const child of children) child.process.kill('SIGKILL');
  temp.cleanup();
});

describe('two processes on one file', () => {
  it('readers see only committed data, a second writer fails clearly or waits, and nothing is corrupted', async () => {
    const file = temp.file('shared.db');
    const impatient = openSqliteStore({ file, busyTimeoutMs: 100 });
    await impatient.putSession(makeSessionRecord('agent:main:main', { label: 'from parent' }));

    const child = startChild(fixture('hold-write-lock.mjs'), [file, '1500']);
    children.push(child);
    expect(await child.waitForLine(/^saw /, 10_000)).toBe('saw from parent');
    await child.waitForLine(/^locked$/, 10_000);

    // The child's transaction is open: readers are not blocked and do not see it.
    expect((await impatient.getSession('agent:main:main'))?.label).toBe('from parent');
    expect(await impatient.getSession('agent:child:held')).toBeUndefined();

    // A writer with a short busy timeout fails with STORE_LOCKED and says what to do.
    const started = Date.now();
    let failure: unknown;
    try {
      await impatient.putSession(makeSessionRecord('agent:main:impatient'));
    } catch (error) {
      failure = error;
    }
    expect(Date.now() - started).toBeGreaterThanOrEqual(90);
    expect(isColloquyError(failure) && failure.code).toBe('STORE_LOCKED');
    expect((failure as Error).message).toContain(file);
    expect((failure as Error).message).toContain('busyTimeoutMs');
    expect(await impatient.getSession('agent:main:impatient')).toBeUndefined();

    // A writer with the default busy timeout waits for the lock, then commits.
    const patient = openSqliteStore({ file });
    await patient.putSession(makeSessionRecord('agent:main:patient'));
    expect(child.lines).not.toContain('committed');
    await child.waitForLine(/^committed$/, 10_000);
    expect((await child.exited).code).toBe(0);

    for (const store of [impatient, patient]) {
      expect((await store.getSession('agent:child:held'))?.sessionId).toBe('held');
      expect(await store.getSession('agent:main:patient')).toBeDefined();
      expect((await store.listSessions()).map((s) => s.key)).toEqual([
        'agent:main:main',
        'agent:main:patient',
        'agent:child:held',
      ]);
    }
    expect(await patient.integrityCheck()).toEqual({ ok: true, problems: [] });
    await impatient.close();
    await patient.close();
  }, 30_000);
});
