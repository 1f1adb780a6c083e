import { ColloquyError } from '@colloquy/core';

/**
 * Group commit: many `Store.transaction` calls share one SQLite commit. See
 * `SqliteStoreOptions.groupCommit` and the README section "Group commit".
 */
export interface GroupCommitOptions {
  /**
   * How long a batch stays open for more transactions after its first one, in milliseconds.
   * Default 0: until the current turn of the event loop is over (`setImmediate`), so every
   * transaction written in one turn shares one commit and none waits for a timer.
   */
  maxDelayMs?: number;
  /**
   * A batch commits at once, inside the transaction call that fills it, when it holds this many
   * transactions (default 1000). Bounds the work a crash can undo and the memory a batch holds
   * while code runs for a long time without yielding to the event loop.
   */
  maxTransactions?: number;
}

/** Group commit options with their defaults applied. */
export interface GroupCommitSettings {
  /**
   * How long a batch stays open after its first transaction, in milliseconds (0: until the event-loop turn
   * ends).
   */
  readonly maxDelayMs: number;
  /** A batch commits at once when it holds this many transactions. */
  readonly maxTransactions: number;
}

const DEFAULT_MAX_TRANSACTIONS = 1000;

/**
 * Resolves the `groupCommit` option: `undefined` or `false` turn group commit off, `true` takes
 * the defaults.
 *
 * @param option - the option as given to `openSqliteStore`
 * @returns the settings, or `undefined` when group commit is off
 * @throws `INVALID_ARGUMENT` for a negative or non-finite delay, or a size below 1
 */
export function resolveGroupCommit(
  option: boolean | GroupCommitOptions | undefined,
): GroupCommitSettings | undefined {
  if (option === undefined || option === false) return undefined;
  const given = option === true ? {} : option;
  const maxDelayMs = given.maxDelayMs ?? 0;
  const maxTransactions = given.maxTransactions ?? DEFAULT_MAX_TRANSACTIONS;
  if (typeof maxDelayMs !== 'number' || !Number.isFinite(maxDelayMs) || maxDelayMs < 0) {
    throw new ColloquyError(
      'INVALID_ARGUMENT',
      `\`groupCommit.maxDelayMs\` must be a number of milliseconds >= 0, got ${String(maxDelayMs)}.`,
      { maxDelayMs },
    );
  }
  if (!Number.isInteger(maxTransactions) || maxTransactions < 1) {
    throw new ColloquyError(
      'INVALID_ARGUMENT',
      `\`groupCommit.maxTransactions\` must be a whole number >= 1, got ${String(maxTransactions)}.`,
      { maxTransactions },
    );
  }
  return { maxDelayMs, maxTransactions };
}

interface Waiter {
  resolve(): void;
  reject(error: Error): void;
}

/**
 * The transactions sharing one open SQLite transaction: how many there are, when the batch is
 * due, and who waits for its commit. The store runs the SQL; this only keeps time and promises.
 */
export class CommitBatch {
  /** Logical transactions written into this batch so far. */
  transactions = 0;
  private readonly waiters: Waiter[] = [];
  private readonly cancel: () => void;

  /**
   * @param settings - when the batch is due
   * @param onDue - called once when the delay has passed (the batch may have settled already)
   */
  constructor(settings: GroupCommitSettings, onDue: (batch: CommitBatch) => void) {
    // Ref'd on purpose: a process that runs out of work still commits before it exits.
    if (settings.maxDelayMs > 0) {
      const timer = setTimeout(() => onDue(this), settings.maxDelayMs);
      this.cancel = () => clearTimeout(timer);
    } else {
      const immediate = setImmediate(() => onDue(this));
      this.cancel = () => clearImmediate(immediate);
    }
  }

  /** A promise settled by {@link settle}. Created on demand, so nobody's rejection goes unhandled. */
  committed(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.waiters.push({ resolve, reject });
    });
  }

  /** Ends the batch: resolves every waiter, or rejects them all with `error`. */
  settle(error?: Error): void {
    this.cancel();
    for (const waiter of this.waiters.splice(0)) {
      if (error === undefined) waiter.resolve();
      else waiter.reject(error);
    }
  }
}
