import type { DeliveryRecord, TurnOperations } from '@colloquy/core/store';
import { retryWithPauses } from '../runtime/retry-with-pauses.js';

/** Records delivery outcomes in batches (see {@link createDeliveryRecorder}). */
export interface DeliveryRecorder {
  /**
   * Queues an outcome for the next batch; resolves once its batch is stored, rejects when that
   * batch could not be, after its retries.
   */
  record(record: DeliveryRecord): Promise<void>;
  /** Resolves once every batch made so far is stored or given up (never rejects). */
  settled(): Promise<void>;
}

/** Options of {@link createDeliveryRecorder}. */
export interface DeliveryRecorderOptions {
  /**
   * The pauses before each new try of a batch the store refused (a database restarting, a full
   * disk); the batch is given up after the last. Default: 0.25 s doubling to 30 s, about a minute
   * in all.
   */
  retryDelaysMs?: readonly number[];
  /** Ends the retries (the runtime's shutdown): a batch still refused then is given up at once. */
  signal?: AbortSignal;
}

const RETRY_DELAYS_MS = [250, 500, 1000, 2000, 4000, 8000, 15_000, 30_000];

/**
 * Creates the recorder of delivery outcomes: the outcomes of the sends that finish within one turn
 * of the event loop are stored together, in ONE `recordDeliveries` call. A reply is sent before its
 * outcome is recorded (its `sending` mark is what keeps it from being sent twice), so a busy runtime
 * pays one commit for many sends, off the path to the reply.
 *
 * A batch the store refuses is tried again after each of `retryDelaysMs`: a reply that went out
 * while the database was restarting is still recorded `delivered` once it is back, instead of
 * staying `sending` until the next start records it failed. Batches are stored in the order they
 * were made, a later one after an earlier one settled, so a retried outcome never overwrites a
 * newer outcome of the same run.
 *
 * @param turns - the store's turn operations
 * @param options - the retry pauses, and the signal that ends them
 * @returns the recorder
 */
export function createDeliveryRecorder(
  turns: Pick<TurnOperations, 'recordDeliveries'>,
  { retryDelaysMs = RETRY_DELAYS_MS, signal }: DeliveryRecorderOptions = {},
): DeliveryRecorder {
  let open: { records: DeliveryRecord[]; stored: Promise<void> } | undefined;
  let previous: Promise<unknown> = Promise.resolve();

  const storeWithRetries = (records: readonly DeliveryRecord[]): Promise<void> =>
    retryWithPauses(() => turns.recordDeliveries(records), {
      pausesMs: retryDelaysMs,
      retries: () => true,
      ...(signal ? { signal } : {}),
    });

  return {
    record(record) {
      if (!open) {
        const records: DeliveryRecord[] = [];
        const before = previous;
        const stored = new Promise<void>((resolve) => setImmediate(resolve))
          .then(() => {
            open = undefined;
            return before;
          })
          .then(() => storeWithRetries(records));
        previous = stored.catch(() => undefined);
        open = { records, stored };
      }
      open.records.push(record);
      return open.stored;
    },
    settled() {
      // The open batch is stored after every earlier one, so waiting for it waits for them all.
      return (open ? open.stored : previous).then(
        () => undefined,
        () => undefined,
      );
    },
  };
}
