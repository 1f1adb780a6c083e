import { AsyncLocalStorage } from 'node:async_hooks';
import { ColloquyError } from '../errors/colloquy-error.js';
import type { BatchReads } from '../interfaces/batch-reads.js';
import type {
  InboxEntry,
  McpTokenRecord,
  OutboxEntry,
  PairingRecord,
  RunRecord,
  SessionRecord,
  SessionWatch,
  StoredMessage,
  ThreadBinding,
  TranscriptMessage,
} from '../interfaces/records.js';
import type {
  McpTokenListQuery,
  MessageSearchQuery,
  MessageSearchResult,
  OutboxListQuery,
  PairingListQuery,
  RunListQuery,
  SessionChanges,
  SessionListQuery,
  SessionPatch,
  Store,
  StoreOperations,
  StoreTransaction,
  TailOptions,
  WatchListQuery,
} from '../interfaces/store.js';
import type {
  DeliveryRecord,
  InboundCommit,
  InboundCommitResult,
  TurnEnd,
  TurnEndResult,
  TurnOperations,
} from '../interfaces/turn-operations.js';

/**
 * {@link StoreOperations} as synchronous calls: what an embedded, single-connection engine offers.
 * The batched reads are not among them: {@link SerializedStore} answers each with its engine's
 * row-level reads, one after another in one turn of its queue.
 */
export type SynchronousStoreOperations = {
  [K in Exclude<keyof StoreOperations, keyof TurnOperations | keyof BatchReads>]-?: (
    ...args: Parameters<NonNullable<StoreOperations[K]>>
  ) => Awaited<ReturnType<NonNullable<StoreOperations[K]>>>;
};

/**
 * {@link TurnOperations} as synchronous calls. Each runs in its own transaction, or inside the open
 * one when called while a transaction is open.
 */
export type SynchronousTurnOperations = {
  [K in keyof TurnOperations]: (
    ...args: Parameters<TurnOperations[K]>
  ) => Awaited<ReturnType<TurnOperations[K]>>;
};

/**
 * A synchronous storage engine on one connection (an in-memory map, an embedded database).
 * {@link SerializedStore} turns it into an async {@link Store} by running one thing at a time.
 */
export interface SynchronousStoreEngine {
  /** The data methods, run on the engine's one connection (inside the open transaction, if any). */
  readonly operations: SynchronousStoreOperations;
  /**
   * The engine's own turn operations, when it has them: the store and its transaction handles then
   * offer `commitInbound`, `endTurn` and `recordDeliveries` (see `turnOperations`), else core's
   * defaults over the row-level calls apply.
   */
  readonly turns?: SynchronousTurnOperations;
  /** Opens a transaction; `commit` or `rollback` follows before anything else runs. */
  begin(): void;
  /** Commits; when it throws, the engine has rolled the transaction back itself. */
  commit(): void;
  /** Undoes every write since `begin`. */
  rollback(): void;
}

const OPERATION_NAMES = [
  'getSession',
  'putSession',
  'patchSession',
  'deleteSession',
  'listSessions',
  'countSessions',
  'appendMessages',
  'readTail',
  'countMessages',
  'searchMessages',
  'setMessagePlatformId',
  'createRun',
  'getRun',
  'updateRun',
  'listRuns',
  'putOutbox',
  'getOutbox',
  'updateOutbox',
  'listOutbox',
  'readChanges',
  'putWatch',
  'listWatches',
  'deleteWatch',
  'putInbox',
  'listInbox',
  'listInboxSessionKeys',
  'consumeInbox',
  'putThreadBinding',
  'getThreadBinding',
  'listThreadBindings',
  'deleteThreadBinding',
  'putPairing',
  'getPairing',
  'listPairings',
  'deletePairing',
  'putMcpToken',
  'getMcpTokenByHash',
  'listMcpTokens',
  'revokeMcpToken',
] as const satisfies readonly (keyof StoreOperations)[];

// Compile-time check that OPERATION_NAMES lists every operation (the turn operations are core's
// defaults over these, see `turnOperations`; the batched reads loop over them, see `SYNCHRONOUS_BATCH_READS`).
type MissingOperation = Exclude<
  keyof StoreOperations,
  (typeof OPERATION_NAMES)[number] | keyof TurnOperations | keyof BatchReads
>;
const everyOperationListed: MissingOperation extends never ? true : never = true;
void everyOperationListed;

interface OpenTransaction {
  active: boolean;
}

/** Options of a {@link SerializedStore}. */
export interface SerializedStoreOptions {
  /**
   * Reject a Store method called on the store itself (instead of the `tx` handle) inside
   * `transaction(fn)` with `STORE_ERROR` (default true). Such a call waits for the transaction, which
   * waits for it: without the check it hangs forever. The check follows the transaction's async
   * context with an `AsyncLocalStorage`, which on Node 22 makes every promise created while a
   * transaction is open run an async hook: about 8% of the CPU of a Telegram turn in the reference
   * app's bench (measured on Node 20, which tracks it the same way). An application whose
   * transaction code is tested with the check on may turn it off (the reference app does;
   * `@colloquy/runtime`'s tests run with it on). On Node 24, whose `AsyncLocalStorage` follows the
   * context without async hooks, it costs little.
   */
  detectNestedCalls?: boolean;
}

/**
 * The base of stores built on a {@link SynchronousStoreEngine} (`MemoryStore`, `SqliteStore`):
 * one queue serialises every call and every transaction on the engine's one connection, so a
 * transaction is isolated and nothing outside it sees its partial writes.
 *
 * A call that finds the queue empty runs at once; while a transaction is open, other calls wait
 * for it to settle. A call on the store from inside its own transaction would wait forever, so
 * it rejects with `STORE_ERROR` instead.
 */
export abstract class SerializedStore implements Store {
  private busy = false;
  private readonly waiting: Array<() => void> = [];
  /** The open transaction's context, when nested calls are detected (see {@link SerializedStoreOptions}). */
  private readonly openTransaction: AsyncLocalStorage<OpenTransaction> | undefined;
  private closed = false;

  // The turn operations are present when the engine has its own (`SynchronousStoreEngine.turns`);
  // without them `turnOperations(store)` uses core's defaults over the row-level calls.
  /** {@inheritDoc StoreOperations.commitInbound} */
  readonly commitInbound?: (inbound: InboundCommit) => Promise<InboundCommitResult>;
  /** {@inheritDoc StoreOperations.endTurn} */
  readonly endTurn?: (end: TurnEnd) => Promise<TurnEndResult>;
  /** {@inheritDoc StoreOperations.recordDeliveries} */
  readonly recordDeliveries?: (records: readonly DeliveryRecord[]) => Promise<void>;

  /**
   * @param engine - the engine every call runs on
   * @param options - see {@link SerializedStoreOptions}
   */
  protected constructor(
    private readonly engine: SynchronousStoreEngine,
    options: SerializedStoreOptions = {},
  ) {
    this.openTransaction =
      options.detectNestedCalls === false ? undefined : new AsyncLocalStorage<OpenTransaction>();
    const turns = engine.turns;
    if (turns !== undefined) {
      this.commitInbound = (inbound) => this.run(() => turns.commitInbound(inbound));
      this.endTurn = (end) => this.run(() => turns.endTurn(end));
      this.recordDeliveries = (records) => this.run(() => turns.recordDeliveries(records));
    }
  }

  /** {@inheritDoc Store.transcriptLocator} */
  abstract transcriptLocator(session: SessionRecord): string | undefined;

  /** Releases the engine's resources; called once, after work in flight has settled. */
  protected abstract closeEngine(): void;

  /** {@inheritDoc Store.transaction} */
  async transaction<T>(fn: (tx: StoreTransaction) => Promise<T>): Promise<T> {
    return this.exclusive(async () => {
      const open: OpenTransaction = { active: true };
      const tx = (this.engine.turns === undefined
        ? new TransactionHandle(this.engine.operations, open)
        : new TurnTransactionHandle(
            this.engine.operations,
            open,
            this.engine.turns,
          )) as unknown as StoreTransaction;
      this.engine.begin();
      let result: T;
      try {
        result = await (this.openTransaction ? this.openTransaction.run(open, () => fn(tx)) : fn(tx));
      } catch (error) {
        open.active = false;
        this.disableContext();
        this.engine.rollback();
        throw error;
      }
      open.active = false;
      this.disableContext();
      this.engine.commit();
      return result;
    });
  }

  /** {@inheritDoc Store.close} */
  async close(): Promise<void> {
    if (this.closed) return;
    await this.exclusive(() => {
      this.closed = true;
      this.closeEngine();
    });
  }

  // --- sessions ---
  /** {@inheritDoc StoreOperations.getSession} */
  getSession(key: string): Promise<SessionRecord | undefined> {
    return this.run((ops) => ops.getSession(key));
  }
  /** {@inheritDoc StoreOperations.putSession} */
  putSession(record: SessionRecord): Promise<void> {
    return this.run((ops) => ops.putSession(record));
  }
  /** {@inheritDoc StoreOperations.patchSession} */
  patchSession(key: string, patch: SessionPatch): Promise<SessionRecord> {
    return this.run((ops) => ops.patchSession(key, patch));
  }
  /** {@inheritDoc StoreOperations.deleteSession} */
  deleteSession(key: string): Promise<boolean> {
    return this.run((ops) => ops.deleteSession(key));
  }
  /** {@inheritDoc StoreOperations.listSessions} */
  listSessions(query?: SessionListQuery): Promise<SessionRecord[]> {
    return this.run((ops) => ops.listSessions(query));
  }
  /** {@inheritDoc StoreOperations.countSessions} */
  countSessions(query?: SessionListQuery): Promise<number> {
    return this.run((ops) => ops.countSessions(query));
  }

  // --- transcripts ---
  /** {@inheritDoc StoreOperations.appendMessages} */
  appendMessages(sessionKey: string, messages: readonly TranscriptMessage[]): Promise<StoredMessage[]> {
    return this.run((ops) => ops.appendMessages(sessionKey, messages));
  }
  /** {@inheritDoc StoreOperations.readTail} */
  readTail(sessionKey: string, limit: number, options?: TailOptions): Promise<StoredMessage[]> {
    return this.run((ops) => ops.readTail(sessionKey, limit, options));
  }
  /** {@inheritDoc StoreOperations.readTails} */
  readTails(sessionKeys: readonly string[], limit: number): Promise<StoredMessage[][]> {
    return this.run((ops) => SYNCHRONOUS_BATCH_READS.readTails(ops, sessionKeys, limit));
  }
  /** {@inheritDoc StoreOperations.searchMessages} */
  searchMessages(query: MessageSearchQuery): Promise<MessageSearchResult> {
    return this.run((ops) => ops.searchMessages(query));
  }
  /** {@inheritDoc StoreOperations.countMessages} */
  countMessages(sessionKey: string): Promise<number> {
    return this.run((ops) => ops.countMessages(sessionKey));
  }
  /** {@inheritDoc StoreOperations.setMessagePlatformId} */
  setMessagePlatformId(sessionKey: string, seq: number, platformMessageId: string): Promise<void> {
    return this.run((ops) => ops.setMessagePlatformId(sessionKey, seq, platformMessageId));
  }

  // --- runs ---
  /** {@inheritDoc StoreOperations.createRun} */
  createRun(run: RunRecord): Promise<void> {
    return this.run((ops) => ops.createRun(run));
  }
  /** {@inheritDoc StoreOperations.getRun} */
  getRun(runId: string): Promise<RunRecord | undefined> {
    return this.run((ops) => ops.getRun(runId));
  }
  /** {@inheritDoc StoreOperations.updateRun} */
  updateRun(runId: string, patch: Partial<Omit<RunRecord, 'runId'>>): Promise<RunRecord> {
    return this.run((ops) => ops.updateRun(runId, patch));
  }
  /** {@inheritDoc StoreOperations.listRuns} */
  listRuns(query?: RunListQuery): Promise<RunRecord[]> {
    return this.run((ops) => ops.listRuns(query));
  }
  /** {@inheritDoc StoreOperations.listRunsOfSessions} */
  listRunsOfSessions(sessionKeys: readonly string[], limit: number): Promise<RunRecord[][]> {
    return this.run((ops) => SYNCHRONOUS_BATCH_READS.listRunsOfSessions(ops, sessionKeys, limit));
  }

  // --- announce outbox ---
  /** {@inheritDoc StoreOperations.putOutbox} */
  putOutbox(entry: OutboxEntry): Promise<boolean> {
    return this.run((ops) => ops.putOutbox(entry));
  }
  /** {@inheritDoc StoreOperations.getOutbox} */
  getOutbox(childSessionKey: string, runId: string): Promise<OutboxEntry | undefined> {
    return this.run((ops) => ops.getOutbox(childSessionKey, runId));
  }
  /** {@inheritDoc StoreOperations.updateOutbox} */
  updateOutbox(
    childSessionKey: string,
    runId: string,
    patch: Partial<Omit<OutboxEntry, 'childSessionKey' | 'runId'>>,
  ): Promise<OutboxEntry> {
    return this.run((ops) => ops.updateOutbox(childSessionKey, runId, patch));
  }
  /** {@inheritDoc StoreOperations.listOutbox} */
  listOutbox(query?: OutboxListQuery): Promise<OutboxEntry[]> {
    return this.run((ops) => ops.listOutbox(query));
  }

  // --- session inbox ---
  /** {@inheritDoc StoreOperations.putInbox} */
  putInbox(entry: InboxEntry): Promise<boolean> {
    return this.run((ops) => ops.putInbox(entry));
  }
  /** {@inheritDoc StoreOperations.listInbox} */
  listInbox(sessionKey: string): Promise<InboxEntry[]> {
    return this.run((ops) => ops.listInbox(sessionKey));
  }
  /** {@inheritDoc StoreOperations.listInboxSessionKeys} */
  listInboxSessionKeys(): Promise<string[]> {
    return this.run((ops) => ops.listInboxSessionKeys());
  }
  /** {@inheritDoc StoreOperations.consumeInbox} */
  consumeInbox(sessionKey: string, ids: readonly string[], at: number): Promise<void> {
    return this.run((ops) => ops.consumeInbox(sessionKey, ids, at));
  }

  // --- thread bindings ---
  /** {@inheritDoc StoreOperations.putThreadBinding} */
  putThreadBinding(binding: ThreadBinding): Promise<void> {
    return this.run((ops) => ops.putThreadBinding(binding));
  }
  /** {@inheritDoc StoreOperations.getThreadBinding} */
  getThreadBinding(channel: string, accountId: string, threadId: string): Promise<ThreadBinding | undefined> {
    return this.run((ops) => ops.getThreadBinding(channel, accountId, threadId));
  }
  /** {@inheritDoc StoreOperations.listThreadBindings} */
  listThreadBindings(query?: { sessionKey?: string; channel?: string }): Promise<ThreadBinding[]> {
    return this.run((ops) => ops.listThreadBindings(query));
  }
  /** {@inheritDoc StoreOperations.deleteThreadBinding} */
  deleteThreadBinding(channel: string, accountId: string, threadId: string): Promise<boolean> {
    return this.run((ops) => ops.deleteThreadBinding(channel, accountId, threadId));
  }

  // --- pairing ---
  // --- watching ---
  /** {@inheritDoc StoreOperations.readChanges} */
  readChanges(sessionKey: string, sinceVersion: number): Promise<SessionChanges | undefined> {
    return this.run((ops) => ops.readChanges(sessionKey, sinceVersion));
  }
  /** {@inheritDoc StoreOperations.putWatch} */
  putWatch(watch: SessionWatch): Promise<void> {
    return this.run((ops) => ops.putWatch(watch));
  }
  /** {@inheritDoc StoreOperations.listWatches} */
  listWatches(query?: WatchListQuery): Promise<SessionWatch[]> {
    return this.run((ops) => ops.listWatches(query));
  }
  /** {@inheritDoc StoreOperations.deleteWatch} */
  deleteWatch(watcherKey: string, targetKey: string, id?: string): Promise<boolean> {
    return this.run((ops) => ops.deleteWatch(watcherKey, targetKey, id));
  }

  /** {@inheritDoc StoreOperations.putPairing} */
  putPairing(record: PairingRecord): Promise<void> {
    return this.run((ops) => ops.putPairing(record));
  }
  /** {@inheritDoc StoreOperations.getPairing} */
  getPairing(channel: string, accountId: string, peerId: string): Promise<PairingRecord | undefined> {
    return this.run((ops) => ops.getPairing(channel, accountId, peerId));
  }
  /** {@inheritDoc StoreOperations.listPairings} */
  listPairings(query: PairingListQuery): Promise<PairingRecord[]> {
    return this.run((ops) => ops.listPairings(query));
  }
  /** {@inheritDoc StoreOperations.deletePairing} */
  deletePairing(channel: string, accountId: string, peerId: string): Promise<boolean> {
    return this.run((ops) => ops.deletePairing(channel, accountId, peerId));
  }

  // --- MCP access tokens ---
  /** {@inheritDoc StoreOperations.putMcpToken} */
  putMcpToken(record: McpTokenRecord): Promise<void> {
    return this.run((ops) => ops.putMcpToken(record));
  }
  /** {@inheritDoc StoreOperations.getMcpTokenByHash} */
  getMcpTokenByHash(hash: string): Promise<McpTokenRecord | undefined> {
    return this.run((ops) => ops.getMcpTokenByHash(hash));
  }
  /** {@inheritDoc StoreOperations.listMcpTokens} */
  listMcpTokens(query?: McpTokenListQuery): Promise<McpTokenRecord[]> {
    return this.run((ops) => ops.listMcpTokens(query));
  }
  /** {@inheritDoc StoreOperations.revokeMcpToken} */
  revokeMcpToken(id: string, at: number): Promise<boolean> {
    return this.run((ops) => ops.revokeMcpToken(id, at));
  }

  // --- internals ---

  /**
   * Runs one synchronous call on the engine outside any transaction: at once when the queue is
   * empty, else in turn. Subclasses use it for their own engine calls (maintenance, export).
   */
  protected run<T>(call: (ops: SynchronousStoreOperations) => T): Promise<T> {
    if (!this.busy) {
      try {
        this.assertUsable();
        return Promise.resolve(call(this.engine.operations));
      } catch (error) {
        return Promise.reject(error);
      }
    }
    return this.exclusive(() => call(this.engine.operations));
  }

  /** Runs `work` alone: nothing else starts on the engine until it settles. */
  private async exclusive<T>(work: () => T | Promise<T>): Promise<T> {
    this.assertUsable();
    if (this.busy) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.busy = true;
    try {
      if (this.closed) throw closedError();
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.busy = false;
    }
  }

  /**
   * Turns the transaction context off between transactions. While any AsyncLocalStorage is enabled,
   * Node (before 22) runs an async hook on every promise the process creates, which costs every
   * request path; transactions here run one at a time, so the context is needed only while one is
   * open (`run` enables it again).
   */
  private disableContext(): void {
    this.openTransaction?.disable();
  }

  private assertUsable(): void {
    if (this.closed) throw closedError();
    if (this.openTransaction?.getStore()?.active) {
      throw new ColloquyError(
        'STORE_ERROR',
        'A Store method was called on the store inside its own transaction; call it on the `tx` handle that transaction(fn) passes to fn.',
      );
    }
  }
}

const OPERATIONS = Symbol('operations');
const OPEN = Symbol('open');

/**
 * The `tx` of one transaction: each operation runs on the engine while the transaction is open and
 * rejects with `STORE_ERROR` once it is over. The methods live on the prototype (added once, below),
 * so a transaction allocates one small object rather than a closure per operation.
 */
class TransactionHandle {
  readonly [OPERATIONS]: SynchronousStoreOperations;
  readonly [OPEN]: OpenTransaction;

  constructor(operations: SynchronousStoreOperations, open: OpenTransaction) {
    this[OPERATIONS] = operations;
    this[OPEN] = open;
  }

  transaction<T>(fn: (tx: StoreTransaction) => Promise<T>): Promise<T> {
    if (!this[OPEN].active) return Promise.reject(transactionOverError());
    return fn(this as unknown as StoreTransaction);
  }
}

for (const name of OPERATION_NAMES) {
  Object.defineProperty(TransactionHandle.prototype, name, {
    value(this: TransactionHandle, ...args: unknown[]): Promise<unknown> {
      if (!this[OPEN].active) return Promise.reject(transactionOverError());
      const operations = this[OPERATIONS];
      try {
        return Promise.resolve((operations[name] as (...a: unknown[]) => unknown).apply(operations, args));
      } catch (error) {
        return Promise.reject(error);
      }
    },
  });
}

/**
 * The batched reads, each a loop of an engine's row-level reads run in one turn of the queue (no
 * other call runs between them): one store call, without a statement of its own per engine.
 */
const SYNCHRONOUS_BATCH_READS: {
  [K in keyof BatchReads]: (
    operations: SynchronousStoreOperations,
    ...args: Parameters<BatchReads[K]>
  ) => Awaited<ReturnType<BatchReads[K]>>;
} = {
  listRunsOfSessions: (operations, sessionKeys, limit) =>
    sessionKeys.map((sessionKey) => operations.listRuns({ sessionKey, limit })),
  readTails: (operations, sessionKeys, limit) =>
    sessionKeys.map((sessionKey) => operations.readTail(sessionKey, limit)),
};

for (const name of ['listRunsOfSessions', 'readTails'] as const satisfies readonly (keyof BatchReads)[]) {
  Object.defineProperty(TransactionHandle.prototype, name, {
    value(this: TransactionHandle, sessionKeys: readonly string[], limit: number): Promise<unknown> {
      if (!this[OPEN].active) return Promise.reject(transactionOverError());
      try {
        return Promise.resolve(SYNCHRONOUS_BATCH_READS[name](this[OPERATIONS], sessionKeys, limit));
      } catch (error) {
        return Promise.reject(error);
      }
    },
  });
}

const TURNS = Symbol('turns');

/** The `tx` of a transaction on an engine with its own turn operations: they join the transaction. */
class TurnTransactionHandle extends TransactionHandle {
  readonly [TURNS]: SynchronousTurnOperations;

  constructor(
    operations: SynchronousStoreOperations,
    open: OpenTransaction,
    turns: SynchronousTurnOperations,
  ) {
    super(operations, open);
    this[TURNS] = turns;
  }
}

const TURN_OPERATION_NAMES = [
  'commitInbound',
  'endTurn',
  'recordDeliveries',
] as const satisfies readonly (keyof TurnOperations)[];

for (const name of TURN_OPERATION_NAMES) {
  Object.defineProperty(TurnTransactionHandle.prototype, name, {
    value(this: TurnTransactionHandle, argument: never): Promise<unknown> {
      if (!this[OPEN].active) return Promise.reject(transactionOverError());
      try {
        return Promise.resolve(this[TURNS][name](argument));
      } catch (error) {
        return Promise.reject(error);
      }
    },
  });
}

function closedError(): ColloquyError {
  return new ColloquyError('STORE_ERROR', 'This store is closed; open a new one.');
}

function transactionOverError(): ColloquyError {
  return new ColloquyError(
    'STORE_ERROR',
    'This transaction is over: a `tx` handle is valid only until the function given to transaction(fn) settles.',
  );
}
