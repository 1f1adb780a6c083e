import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../src/open-sqlite-store.js';
import { type Child, startChild } from './helpers/child.js';
import { ensureDist, fixture } from './helpers/ensure-dist.js';
import { createTempDir } from './helpers/temp-dir.js';

const ROUNDS = 20;
const GROUP_ROUNDS = 10;
const KEY = 'agent:main:main';
const temp = createTempDir('colloquy-crash-');
const children: Child[] = [];

beforeAll(() => ensureDist(), 60_000);
afterAll(() => {
  for (const child of children) child.process.kill('SIGKILL');
  temp.cleanup();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs the crash writer `rounds` times on one file, SIGKILLs it at a random moment each time, and
 * checks after each kill that the file is intact and holds every write the writer acknowledged.
 */
async function killRepeatedly(file: string, rounds: number, mode: 'plain' | 'group') {
  const acknowledged = { messages: 0, runs: 0 };
  for (let round = 0; round < rounds; round++) {
    const args = [file, round % 2 === 0 ? 'NORMAL' : 'FULL', ...(mode === 'group' ? ['group'] : [])];
    const child = startChild(fixture('crash-writer.mjs'), args);
    children.push(child);
    // Early rounds may die while the file is created and migrated; later ones mid-loop.
    if (round >= 3) await child.waitForLine(/^ready$/, 10_000);
    await sleep(round < 3 ? 20 + Math.random() * 150 : Math.random() * 250);
    child.process.kill('SIGKILL');
    const { signal } = await child.exited;
    expect(signal, child.stderr()).toBe('SIGKILL');

    const store = openSqliteStore({ file });
    try {
      expect(await store.integrityCheck()).toEqual({ ok: true, problems: [] });
      const count = await store.countMessages(KEY);
      if (count > 0) expect((await store.readTail(KEY, 1))[0]?.seq).toBe(count);
      for (const line of child.lines) {
        const [kind, id, seq] = line.split(' ');
        if (kind === 'msg') {
          const [stored] = await store.readTail(KEY, 1, { beforeSeq: Number(seq) + 1 });
          expect(stored?.content, `round ${round}: ${line}`).toBe(id!.replace('_', ' '));
          acknowledged.messages += 1;
        } else if (kind === 'run') {
          expect((await store.getRun(id!))?.status, `round ${round}: ${line}`).toBe('running');
          const [stored] = await store.readTail(KEY, 1, { beforeSeq: Number(seq) + 1 });
          expect(stored?.runId, `round ${round}: ${line}`).toBe(id);
          acknowledged.runs += 1;
        }
      }
      // A transaction is all or nothing: every run record has its transcript entry.
      const runs = await store.listRuns({ sessionKey: KEY });
      const runIdsInTranscript = new Set(
        (await store.readTail(KEY, count)).map((m) => m.runId).filter((id) => id !== undefined),
      );
      expect(runs.filter((r) => !runIdsInTranscript.has(r.runId))).toEqual([]);
      expect(runIdsInTranscript.size).toBe(runs.length);
    } finally {
      await store.close();
    }
  }
  expect(acknowledged.messages).toBeGreaterThan(0);
  expect(acknowledged.runs).toBeGreaterThan(0);
}

describe('crash safety', () => {
  it(`keeps every acknowledged write when the writer is SIGKILLed at random moments (${ROUNDS} rounds)`, async () => {
    await killRepeatedly(temp.file('crash.db'), ROUNDS, 'plain');
  }, 60_000);

  it(`with group commit, keeps every write whose flush resolved (${GROUP_ROUNDS} rounds)`, async () => {
    await killRepeatedly(temp.file('crash-group.db'), GROUP_ROUNDS, 'group');
  }, 60_000);
});
