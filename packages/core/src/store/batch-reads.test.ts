import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../interfaces/records.js';
import type { StoreOperations } from '../interfaces/store.js';
import { batchReads } from './batch-reads.js';
import { MemoryStore } from './memory-store.js';

const T0 = 1_700_000_000_000;
const KEY = 'agent:main:main';

const run = (runId: string, createdAt: number): RunRecord => ({
  runId,
  sessionKey: KEY,
  lane: 'main',
  status: 'done',
  createdAt,
  updatedAt: createdAt,
  message: 'hi',
  deliver: false,
  attempts: 0,
});

/** The store seen through its row-level reads only, counting them: a third-party store without batches. */
function withoutBatches(store: MemoryStore): { store: StoreOperations; reads: string[] } {
  const reads: string[] = [];
  const view = new Proxy(store, {
    get(target, name, receiver) {
      if (name === 'listRunsOfSessions' || name === 'readTails') return undefined;
      const value = Reflect.get(target, name, receiver);
      if (name !== 'listRuns' && name !== 'readTail') return value;
      return (...args: unknown[]) => {
        reads.push(name);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store: view, reads };
}

describe('batchReads', () => {
  it("uses a store's own batched reads when it has them", async () => {
    const store = new MemoryStore();
    const asked: unknown[] = [];
    const own = Object.assign(store, {
      async listRunsOfSessions(keys: readonly string[], limit: number): Promise<RunRecord[][]> {
        asked.push([keys, limit]);
        return keys.map(() => []);
      },
    });
    expect(await batchReads(own).listRunsOfSessions([KEY, 'other'], 3)).toEqual([[], []]);
    expect(asked).toEqual([[[KEY, 'other'], 3]]);
  });

  it('falls back to one row-level read per session, answering each key in order', async () => {
    const memory = new MemoryStore();
    await memory.createRun(run('r1', T0));
    await memory.createRun(run('r2', T0 + 1));
    await memory.putSession({
      key: KEY,
      sessionId: 's1',
      agentId: 'main',
      kind: 'main',
      createdAt: T0,
      updatedAt: T0,
    });
    await memory.appendMessages(KEY, [
      { role: 'user', content: 'one', timestamp: T0 },
      { role: 'user', content: 'two', timestamp: T0 },
    ]);
    const { store, reads } = withoutBatches(memory);
    const runs = await batchReads(store).listRunsOfSessions(['other', KEY], 1);
    expect(runs.map((list) => list.map((r) => r.runId))).toEqual([[], ['r2']]);
    const tails = await batchReads(store).readTails([KEY, 'other'], 1);
    expect(tails.map((list) => list.map((m) => m.content))).toEqual([['two'], []]);
    expect(reads).toEqual(['listRuns', 'listRuns', 'readTail', 'readTail']);
  });
});
