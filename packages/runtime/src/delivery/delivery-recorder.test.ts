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

  it('rejects every record of a batch the store refused, and stores the next batch', async () => {
    let fail = true;
    const recorder = createDeliveryRecorder({
      recordDeliveries: async () => {
        if (fail) throw new Error('disk full');
      },
    });
    const first = [recorder.record(record('a')), recorder.record(record('b'))];
    await Promise.all(first.map((p) => expect(p).rejects.toThrow('disk full')));
    fail = false;
    await expect(recorder.record(record('c'))).resolves.toBeUndefined();
  });
});
