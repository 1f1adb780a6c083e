import { join } from 'node:path';
import type { Logger } from '@colloquy/core';
import { LRUCache } from 'lru-cache';
import { nodeStateFs, type StateFs } from './atomic-file.js';
import { JsonStateFile } from './state-file.js';

const FILE = 'inbound-ledger.json';

/** How many handled message ids are remembered across restarts. */
const HANDLED_CAPACITY = 1000;

interface LedgerFile {
  version: 1;
  /** The last moment (epoch ms) the account was known to be connected. */
  connectedUntil?: number;
  /** Ids of the latest messages handed to the runtime, oldest first. */
  handled: string[];
}

/**
 * What the plugin remembers about inbound messages across restarts, in `<stateDir>/inbound-ledger.json`:
 * when the account was last known to be connected, so that messages WhatsApp delivers after a
 * reconnect (`append`) can be told from older ones, and the ids of the latest messages handed to the
 * runtime, so that a message delivered again (as `append` and as `notify`, or after a restart) runs once.
 */
export class InboundLedger {
  private connectedUntil: number | undefined;
  private since: number | undefined;
  private readonly handled = new LRUCache<string, true>({ max: HANDLED_CAPACITY });

  private constructor(private readonly file: JsonStateFile) {}

  /** Loads the ledger of a state dir; a missing or corrupt file starts an empty one. */
  static async load(stateDir: string, log: Logger, fs: StateFs = nodeStateFs): Promise<InboundLedger> {
    const ledger = new InboundLedger(
      new JsonStateFile(join(stateDir, FILE), fs, log, {
        corrupt:
          'WhatsApp inbound ledger is corrupt; starting empty (messages from before this start are not answered)',
        saveFailed: 'could not save the WhatsApp inbound ledger',
      }),
    );
    const parsed = (await ledger.file.read()) as Partial<LedgerFile> | undefined;
    if (typeof parsed?.connectedUntil === 'number') ledger.connectedUntil = parsed.connectedUntil;
    for (const id of parsed?.handled ?? []) if (typeof id === 'string') ledger.handled.set(id, true);
    return ledger;
  }

  /**
   * The connection opened at `now`: messages that arrived since the account was last connected are
   * to be answered. Without a record of an earlier connection (a new link), none older than `now` are.
   */
  opened(now: number): void {
    this.since = this.connectedUntil ?? now;
    this.stillConnected(now);
  }

  /** The account is (or was, until the connection closed) connected at `now`. */
  stillConnected(now: number): void {
    this.connectedUntil = Math.max(this.connectedUntil ?? 0, now);
    this.scheduleSave();
  }

  /**
   * Whether a message sent at `at` (epoch ms, whole seconds as WhatsApp stamps them) is newer than
   * the last connection before the current one, i.e. arrived while the account was offline.
   */
  isSinceLastConnection(at: number): boolean {
    if (this.since === undefined) return false;
    return at >= Math.floor(this.since / 1000) * 1000;
  }

  /** Whether the message with this id was already handed to the runtime. */
  has(id: string): boolean {
    return this.handled.has(id);
  }

  /** Records that the message `id` was handed to the runtime at `now`. */
  record(id: string, now: number): void {
    this.handled.set(id, true);
    this.stillConnected(now);
  }

  /** Resolves once pending writes are on disk. */
  async flush(): Promise<void> {
    await this.file.flush();
  }

  private scheduleSave(): void {
    this.file.scheduleSave((): LedgerFile => {
      const data: LedgerFile = { version: 1, handled: [...this.handled.rkeys()] }; // oldest first
      if (this.connectedUntil !== undefined) data.connectedUntil = this.connectedUntil;
      return data;
    });
  }
}
