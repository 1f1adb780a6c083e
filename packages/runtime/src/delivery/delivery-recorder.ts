import type { DeliveryRecord, TurnOperations } from '@colloquy/core/store';

/** Records delivery outcomes in batches (see {@link createDeliveryRecorder}). */
export interface DeliveryRecorder {
  /**
   * Queues an outcome for the next batch; resolves once its batch is stored, rejects when that
   * batch could not be.
   */
  record(record: DeliveryRecord): Promise<void>;
}

/**
 * Creates the recorder of delivery outcomes: the outcomes of the sends that finish within one turn
 * of the event loop are stored together, in ONE `recordDeliveries` call. A reply is sent before its
 * outcome is recorded (its `sending` mark is what keeps it from being sent twice), so a busy runtime
 * pays one commit for many sends, off the path to the reply.
 *
 * @param turns - the store's turn operations
 * @returns the recorder
 */
export function createDeliveryRecorder(turns: Pick<TurnOperations, 'recordDeliveries'>): DeliveryRecorder {
  let open: { records: DeliveryRecord[]; stored: Promise<void> } | undefined;

  return {
    record(record) {
      if (!open) {
        const records: DeliveryRecord[] = [];
        const stored = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
          open = undefined;
          return turns.recordDeliveries(records);
        });
        open = { records, stored };
      }
      open.records.push(record);
      return open.stored;
    },
  };
}
