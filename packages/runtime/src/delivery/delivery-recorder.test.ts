import type { DeliveryRecord } from '@colloquy/core/store';
import { describe, expect, it } from 'vitest';
import { createDeliveryRecorder } from './delivery-recorder.js';

const record = (runId: string): DeliveryRecord => ({
  runId,
  sessionKey: 'agent:main:main',
  state: { kind: 'reply', status: 'delivered', messageId: `p-${runId}`, messageIds: [`p-${runId}`], at: 1 },
});

describe('createDeliveryRecorder', () => {
  it('stores the outcomes of one turn of the event loop in one call, later ones in the next', async () => {
    const calls: string[][] = [];
    const recorder = createDeliveryRecorder({
      recordDeliveries: async (records) => {
        calls.push(records.map((r) => r.runId));
      },
    });
    await Promise.all([recorder.record(record('a')), recorder.record(record('b'))]);
    await recorder.record(record('c'));
    expect(calls).toEqual([['a', 'b'], ['c']]);
  });

  it('rejects every record of a batch the store refused after its retries, and stores the next batch', async () => {
    let fail = true;
    let tries = 0;
    const recorder = createDeliveryRecorder(
      {
        recordDeliveries: async () => {
          tries++;
          if (fail) throw new Error('disk full');
        },
      },
      { retryDelaysMs: [1, 1] },
    );
    const first = [recorder.record(record('a')), recorder.record(record('b'))];
    await Promise.all(first.map((p) => expect(p).rejects.toThrow('disk full')));
    expect(tries).toBe(3);
    fail = false;
    await expect(recorder.record(record('c'))).resolves.toBeUndefined();
  });

  it('stores a batch the store refused while it was down once it is back', async () => {
    let down = 2;
    const stored: string[][] = [];
    const recorder = createDeliveryRecorder(
      {
        recordDeliveries: async (records) => {
          if (down-- > 0) throw new Error('connection refused');
          stored.push(records.map((r) => r.runId));
        },
      },
      { retryDelaysMs: [5, 5, 5] },
    );
    await expect(recorder.record(record('a'))).resolves.toBeUndefined();
    expect(stored).toEqual([['a']]);
  });

  it('stores a later batch only after an earlier one being retried', async () => {
    let down = true;
    const stored: string[][] = [];
    const recorder = createDeliveryRecorder(
      {
        recordDeliveries: async (records) => {
          if (down && records[0]?.runId === 'a') throw new Error('connection refused');
          stored.push(records.map((r) => r.runId));
        },
      },
      { retryDelaysMs: [20, 20, 20] },
    );
    const first = recorder.record(record('a'));
    await new Promise((resolve) => setImmediate(resolve));
    const second = recorder.record(record('b'));
    await new Promise((resolve) => setTimeout(resolve, 30));
    // 'b' waits behind 'a', which is still being retried.
    expect(stored).toEqual([]);
    down = false;
    await Promise.all([first, second]);
    expect(stored).toEqual([['a'], ['b']]);
  });
});

describe('createDeliveryRecorder at shutdown', () => {
  it('settles once a batch being retried is stored', async () => {
    let down = 1;
    const stored: string[][] = [];
    const recorder = createDeliveryRecorder(
      {
        recordDeliveries: async (records) => {
          if (down-- > 0) throw new Error('connection refused');
          stored.push(records.map((r) => r.runId));
        },
      },
      { retryDelaysMs: [50] },
    );
    void recorder.record(record('a'));
    await recorder.settled();
    expect(stored).toEqual([['a']]);
    await expect(recorder.settled()).resolves.toBeUndefined();
  });

  it('gives a refused batch up at once when its signal fires, instead of pausing on', async () => {
    const stop = new AbortController();
    let tries = 0;
    const recorder = createDeliveryRecorder(
      {
        recordDeliveries: async () => {
          tries++;
          throw new Error('store closed');
        },
      },
      { retryDelaysMs: [60_000, 60_000], signal: stop.signal },
    );
    const recorded = recorder.record(record('a'));
    await new Promise((resolve) => setTimeout(resolve, 20));
    const started = performance.now();
    stop.abort();
    await expect(recorded).rejects.toThrow('store closed');
    expect(performance.now() - started).toBeLessThan(1000);
    expect(tries).toBe(1);
    await expect(recorder.settled()).resolves.toBeUndefined();
  });
});
