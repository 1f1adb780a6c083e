import { describe, expect, it } from 'vitest';
import { type LineageRecord, MAX_LINEAGE_DEPTH, readSessionLineage } from './session-lineage.js';

function storeOf(records: Record<string, LineageRecord>) {
  return async (key: string) => records[key];
}

describe('readSessionLineage', () => {
  it('lists ancestors nearest first and counts only the leading forked links', async () => {
    const get = storeOf({
      a: {},
      b: { spawnedBy: 'a', forked: false },
      c: { spawnedBy: 'b', forked: true },
    });
    expect(await readSessionLineage({ spawnedBy: 'c', forked: true }, get)).toEqual({
      ancestors: ['c', 'b', 'a'],
      inheritsFrom: 2,
    });
    expect(await readSessionLineage({ spawnedBy: 'c' }, get)).toEqual({
      ancestors: ['c', 'b', 'a'],
      inheritsFrom: 0,
    });
  });

  it('stops at a missing parent, a cycle and the depth bound', async () => {
    expect(await readSessionLineage({ spawnedBy: 'gone', forked: true }, storeOf({}))).toEqual({
      ancestors: ['gone'],
      inheritsFrom: 1,
    });
    const cycle = storeOf({ x: { spawnedBy: 'y' }, y: { spawnedBy: 'x' } });
    expect((await readSessionLineage({ spawnedBy: 'x' }, cycle)).ancestors).toEqual(['x', 'y']);
    const chain: Record<string, LineageRecord> = {};
    for (let i = 0; i < 100; i++) chain[`s${i}`] = { spawnedBy: `s${i + 1}` };
    const long = await readSessionLineage({ spawnedBy: 's0' }, storeOf(chain));
    expect(long.ancestors).toHaveLength(MAX_LINEAGE_DEPTH);
  });
});
