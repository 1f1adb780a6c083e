import { describe, expect, it } from 'vitest';
import { canFoldRuns, type QueuedRun } from './queued-run.js';

const run = (id: string, extra: Partial<QueuedRun> = {}): QueuedRun => ({
  id,
  sessionKey: 'agent:main:memory:dm:u',
  lane: 'main',
  deliver: true,
  foldable: true,
  ...extra,
});

/** A turn begun when its run was stored (see `queueInboundRun`). */
const begun = { session: undefined, runs: [] };

describe('canFoldRuns', () => {
  it('folds chat messages of one lane and delivery into one turn', () => {
    expect(canFoldRuns(run('a'), run('b'))).toBe(true);
    expect(canFoldRuns(run('a'), run('b', { deliver: false }))).toBe(false);
    expect(canFoldRuns(run('a'), run('b', { foldable: false }))).toBe(false);
  });

  it('never folds a run whose turn began when it was stored, ahead or behind', () => {
    expect(canFoldRuns(run('a', { begun }), run('b'))).toBe(false);
    // Behind another run it is no longer `queued`: the turn it joined would skip it, and it would never end.
    expect(canFoldRuns(run('a'), run('b', { begun }))).toBe(false);
  });
});
