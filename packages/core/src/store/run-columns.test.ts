import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../interfaces/records.js';
import { restoreRunColumns, splitRunMeta, storedRun } from './run-columns.js';

const run: RunRecord = {
  runId: 'r1',
  sessionKey: 'agent:main:main',
  lane: 'main',
  status: 'done',
  createdAt: 3,
  updatedAt: 9,
  startedAt: 4,
  endedAt: 9,
  message: 'hi',
  deliver: true,
  attempts: 1,
  meta: {
    input: { text: 'hi' },
    pendingDelivery: { kind: 'reply', text: 'hello' },
    delivery: { status: 'sending' },
  },
};

describe('a run split into columns', () => {
  it('keeps status, times, attempts and delivery state out of the JSON, and reads back whole', () => {
    const stored = storedRun(run);
    expect(stored).toMatchObject({
      runId: 'r1',
      sessionKey: 'agent:main:main',
      spawnedBy: null,
      createdAt: 3,
      status: 'done',
      updatedAt: 9,
      startedAt: 4,
      endedAt: 9,
      attempts: 1,
      pendingDelivery: '{"kind":"reply","text":"hello"}',
      delivery: '{"status":"sending"}',
    });
    const json = JSON.parse(stored.json) as Record<string, unknown>;
    for (const field of ['status', 'updatedAt', 'startedAt', 'endedAt', 'attempts']) {
      expect(json).not.toHaveProperty(field);
    }
    expect(json.meta).toEqual({ input: { text: 'hi' } });
    expect(restoreRunColumns(JSON.parse(stored.json) as RunRecord, stored)).toEqual(run);
  });

  it('reads back a run without times, attempts or meta as it was', () => {
    const bare: RunRecord = { ...run, startedAt: undefined, endedAt: undefined, meta: undefined };
    delete bare.startedAt;
    delete bare.endedAt;
    delete bare.meta;
    const stored = storedRun(bare);
    expect(stored).toMatchObject({ startedAt: null, endedAt: null, pendingDelivery: null, delivery: null });
    expect(restoreRunColumns(JSON.parse(stored.json) as RunRecord, stored)).toEqual(bare);
  });

  it('keeps a meta that is not an object whole', () => {
    expect(splitRunMeta('note')).toEqual({ pendingDelivery: null, delivery: null, rest: 'note' });
  });
});
