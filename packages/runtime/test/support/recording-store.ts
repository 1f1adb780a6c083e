import { type Store, type StoreTransaction, type TurnOperations, turnOperations } from '@colloquy/core/store';
import { type Harness, type HarnessOptions, makeStore, type StoreKind, startHarness } from './harness.js';

/** One store call the runtime made: the method, and whether it ran inside a transaction. */
export interface RecordedCall {
  method: string;
  inTransaction: boolean;
}

/** What a {@link RecordingStore} saw since it was created or last reset. */
export interface StoreRecording {
  /** Every data call (sessions, transcripts, runs, ..., and the turn operations), in order. */
  calls: readonly RecordedCall[];
  /**
   * Units of work that committed: each top-level transaction, and each write called on the store
   * outside a transaction (a call on its own is atomic, so it commits by itself).
   */
  commits: number;
}

/** A store that counts what the runtime asks of it (see {@link recordStore}). */
export interface RecordingStore {
  store: Store;
  /** The calls and commits since the last {@link RecordingStore.reset}. */
  recording(): StoreRecording;
  reset(): void;
}

/** The turn operations: every store has them, its own or core's defaults (see `turnOperations`). */
const TURN_OPERATIONS = new Set<string>(['commitInbound', 'endTurn', 'recordDeliveries']);
/** Methods that are no data call: transaction control and the synchronous locator. */
const NOT_DATA_CALLS = new Set(['transaction', 'flush', 'close', 'transcriptLocator']);
/** Reads: they commit nothing when called on their own. */
const READ_PREFIXES = ['get', 'list', 'count', 'read', 'search'];

const isRead = (method: string): boolean => READ_PREFIXES.some((prefix) => method.startsWith(prefix));

/**
 * Wraps a store so every data call and every commit is counted: what a turn costs in store work,
 * whichever store is underneath. A turn operation (`commitInbound`, `endTurn`, ...) counts as one
 * call, whether the store implements it or core's default does: what a store does inside it is its
 * own business (one transaction either way).
 *
 * @param store - the store to wrap
 * @returns the wrapped store and its recording
 */
export function recordStore(store: Store): RecordingStore {
  let calls: RecordedCall[] = [];
  let commits = 0;

  function wrap<T extends StoreTransaction>(target: T, inTransaction: boolean): T {
    return new Proxy(target, {
      get(object, name, receiver) {
        const value = TURN_OPERATIONS.has(String(name))
          ? turnOperations(object)[name as keyof TurnOperations]
          : Reflect.get(object, name, receiver);
        if (typeof value !== 'function' || typeof name !== 'string') return value;
        if (name === 'transaction') {
          return <R>(fn: (tx: StoreTransaction) => Promise<R>) =>
            (value as StoreTransaction['transaction'])
              .call(object, (tx) => fn(wrap(tx, true)))
              .then((result) => {
                if (!inTransaction) commits++;
                return result as R;
              });
        }
        if (NOT_DATA_CALLS.has(name)) return value.bind(object);
        return (...args: unknown[]) => {
          calls.push({ method: name, inTransaction });
          const result = (value as (...a: unknown[]) => unknown).apply(object, args);
          if (inTransaction || isRead(name)) return result;
          return Promise.resolve(result).then((settled) => {
            commits++;
            return settled;
          });
        };
      },
    });
  }

  return {
    store: wrap(store, false),
    recording: () => ({ calls: [...calls], commits }),
    reset() {
      calls = [];
      commits = 0;
    },
  };
}

/**
 * The calls of a recording as `method` counts, for a readable failure message.
 *
 * @param recording - what a {@link RecordingStore} saw
 * @returns how many times each method was called
 */
export function tallyCalls(recording: StoreRecording): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const call of recording.calls) counts[call.method] = (counts[call.method] ?? 0) + 1;
  return counts;
}

/**
 * A harness whose runtime works on a recording store of the given kind (the store underneath is
 * returned too, for seeding and reading past the recorder). Closing the harness removes the store.
 *
 * @param kind - the store kind
 * @param options - the harness options (but the store)
 */
export async function startRecordingHarness(
  kind: StoreKind,
  options: Omit<HarnessOptions, 'store' | 'storeKind'> = {},
): Promise<{ harness: Harness; recorder: RecordingStore; inner: Store }> {
  const made = await makeStore(kind);
  const recorder = recordStore(made.store);
  const harness = await startHarness({ ...options, store: recorder.store });
  const close = harness.close;
  harness.close = async () => {
    await close();
    made.cleanup();
  };
  return { harness, recorder, inner: made.store };
}
