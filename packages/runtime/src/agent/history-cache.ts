import type { StoredMessage, TranscriptMessage } from '@colloquy/core';
import type { StoreOperations } from '@colloquy/core/store';
import { LRUCache } from 'lru-cache';
import { estimateMessageTokens } from './build-prompt.js';

/** The default byte cap of the history cache: 64 MiB (`runtime.historyCacheMiB`). */
export const DEFAULT_HISTORY_CACHE_BYTES = 64 * 1024 * 1024;

/** Options of {@link createHistoryCache}. */
export interface HistoryCacheOptions {
  /**
   * The most bytes of messages held between loads, by {@link estimateMessageBytes}; least recently
   * used sessions are dropped first. Default {@link DEFAULT_HISTORY_CACHE_BYTES} (64 MiB). 0 holds nothing.
   */
  maxBytes?: number;
  /** Never hold or return more than this many messages per session. Default 2000. */
  maxMessages?: number;
  /**
   * At most this many messages read per turn to catch up with the store (the newest held and those
   * after it); more new messages than that read the tail again. Default 16.
   */
  probe?: number;
  /** Messages per store read when filling from older history. Default 64. */
  pageSize?: number;
}

/** The prompt history of sessions, read from the store incrementally. */
export interface HistoryCache {
  /**
   * The newest transcript messages of a session that fit `budgetTokens` (`estimateMessageTokens`), oldest
   * first; the newest message is always included. Returned objects are shared: do not mutate them.
   * `endSeq`, the seq of the transcript's newest message when the caller knows it (it just appended
   * it): when the session is held up to it, the store is not read.
   */
  load(
    store: StoreOperations,
    sessionKey: string,
    sessionId: string,
    budgetTokens: number,
    endSeq?: number,
  ): Promise<StoredMessage[]>;
  /**
   * Adds messages the caller just appended to a held session, when they follow its newest held
   * message directly (seq one higher; otherwise the next load reads what came between).
   */
  note(sessionKey: string, sessionId: string, appended: readonly StoredMessage[]): void;
  /** Forgets a session (e.g. after it was deleted). */
  forget(sessionKey: string): void;
  /** Sessions held. */
  size(): number;
  /** Estimated bytes held (never more than `maxBytes` between loads). */
  bytes(): number;
}

interface Entry {
  sessionId: string;
  /** Ascending, contiguous `seq`. */
  messages: StoredMessage[];
  tokens: number[];
  /** {@link estimateMessageBytes} of each message, computed once when it is cached. */
  sizes: number[];
  /** The sum of `sizes`. */
  bytes: number;
  /** True when `messages[0]` is the first message of the transcript. */
  atStart: boolean;
}

/** Bytes a message costs beyond its strings: the object, its array slots and small fields. */
const MESSAGE_OVERHEAD_BYTES = 96;

/**
 * A cheap estimate of the memory a message holds: twice the UTF-16 length of its text (string
 * content, or the JSON of its blocks and metadata; images count their base64 data) plus a fixed
 * overhead per message. Meant to be computed once, when the message enters the cache.
 *
 * @param message - a transcript message
 * @returns estimated bytes
 */
export function estimateMessageBytes(message: TranscriptMessage): number {
  let chars = typeof message.content === 'string' ? message.content.length : jsonLength(message.content);
  for (const field of ['provenance', 'sender', 'media'] as const) {
    if (message[field] !== undefined) chars += jsonLength(message[field]);
  }
  return chars * 2 + MESSAGE_OVERHEAD_BYTES;
}

function jsonLength(value: unknown): number {
  try {
    return JSON.stringify(value)?.length ?? 0;
  } catch {
    return 0;
  }
}

/**
 * Creates the history cache the agent loop builds prompts from. Each turn reads only the newest
 * few messages (`probe`) and appends what is new; older messages are read only when the budget
 * reaches past what is held. The store stays the source of truth: a gap (more new messages than
 * `probe`), a shorter transcript or a new `sessionId` (the session was reset or re-created) makes
 * it read the tail again from scratch. So the cost of a turn follows what changed, not the length
 * of the transcript.
 *
 * Memory is capped in bytes (`maxBytes`), not in sessions: after each load the least recently
 * used sessions are dropped until the cache fits. A session whose prompt window is bigger than
 * the cap on its own is still served in full; the cache then keeps only its newest messages that
 * fit (none, if not even the newest fits), and reads the rest from the store on the next turn.
 * While a load runs, the window it builds is outside the cap.
 *
 * @param options - bounds
 * @returns the cache
 */
export function createHistoryCache(options: HistoryCacheOptions = {}): HistoryCache {
  const maxBytes = Math.max(0, options.maxBytes ?? DEFAULT_HISTORY_CACHE_BYTES);
  const maxMessages = options.maxMessages ?? 2000;
  const probe = options.probe ?? 16;
  const pageSize = options.pageSize ?? 64;
  // Entries being loaded are taken out, so the bytes held are theirs only in between. With
  // `maxBytes` 0 nothing fits (see `put`), so the cache's own size cap (it needs one above 0) is moot.
  const entries = new LRUCache<string, Entry>({
    maxSize: Math.max(1, maxBytes),
    sizeCalculation: (entry) => entry.bytes,
  });

  function take(sessionKey: string): Entry | undefined {
    const entry = entries.get(sessionKey);
    if (entry) entries.delete(sessionKey);
    return entry;
  }

  function put(sessionKey: string, entry: Entry): void {
    take(sessionKey);
    dropOldest(entry, entry.messages.length - newestThatFit(entry));
    if (entry.messages.length === 0) return;
    entries.set(sessionKey, entry); // drops the least recently used sessions until it fits
  }

  /** How many of the newest messages of `entry` fit `maxBytes`. */
  function newestThatFit(entry: Entry): number {
    let bytes = 0;
    let count = 0;
    for (let i = entry.sizes.length - 1; i >= 0; i--) {
      bytes += entry.sizes[i]!;
      if (bytes > maxBytes) break;
      count++;
    }
    return count;
  }

  function dropOldest(entry: Entry, count: number): void {
    if (count <= 0) return;
    entry.messages.splice(0, count);
    entry.tokens.splice(0, count);
    for (const size of entry.sizes.splice(0, count)) entry.bytes -= size;
    entry.atStart = false;
  }

  function append(entry: Entry, page: readonly StoredMessage[], where: 'front' | 'back'): void {
    const tokens = page.map(estimateMessageTokens);
    const sizes = page.map(estimateMessageBytes);
    for (const size of sizes) entry.bytes += size;
    if (where === 'back') {
      entry.messages.push(...page);
      entry.tokens.push(...tokens);
      entry.sizes.push(...sizes);
    } else {
      entry.messages.unshift(...page);
      entry.tokens.unshift(...tokens);
      entry.sizes.unshift(...sizes);
    }
  }

  /**
   * Reads what was appended after the newest message held, starting from that message itself: the
   * page must begin with it, else the transcript is shorter than held or more than `probe - 1`
   * messages are new (a gap), and the caller reads the tail again.
   */
  async function catchUp(store: StoreOperations, sessionKey: string, entry: Entry): Promise<boolean> {
    const last = entry.messages[entry.messages.length - 1];
    if (!last) return false;
    const page = await store.readTail(sessionKey, probe, { afterSeq: last.seq - 1 });
    if (page[0]?.seq !== last.seq) return false;
    append(entry, page.slice(1), 'back');
    return true;
  }

  async function extendBackwards(store: StoreOperations, sessionKey: string, entry: Entry): Promise<void> {
    const oldest = entry.messages[0];
    const page = await store.readTail(sessionKey, pageSize, oldest ? { beforeSeq: oldest.seq } : undefined);
    if (page.length < pageSize) entry.atStart = true;
    if (page.length === 0) return;
    append(entry, page, 'front');
  }

  return {
    async load(store, sessionKey, sessionId, budgetTokens, endSeq) {
      let entry = take(sessionKey);
      if (entry && entry.sessionId !== sessionId) entry = undefined;
      const held = entry?.messages[entry.messages.length - 1]?.seq;
      if (entry && (endSeq === undefined || held !== endSeq) && !(await catchUp(store, sessionKey, entry))) {
        entry = undefined;
      }
      entry ??= { sessionId, messages: [], tokens: [], sizes: [], bytes: 0, atStart: false };

      // Walk back from the newest message until the budget is spent, reading older pages as needed.
      let used = 0;
      let first = entry.messages.length;
      for (;;) {
        while (first > 0) {
          const cost = entry.tokens[first - 1]!;
          if (first < entry.messages.length && used + cost > budgetTokens) break;
          if (entry.messages.length - first >= maxMessages) break;
          used += cost;
          first--;
        }
        const full = first > 0 || entry.messages.length - first >= maxMessages;
        if (full || entry.atStart) break;
        const before = entry.messages.length;
        await extendBackwards(store, sessionKey, entry);
        first += entry.messages.length - before;
      }
      // Keep only what the prompt uses; older messages are read again if a later budget needs them.
      dropOldest(entry, first);
      const window = entry.messages.slice();
      put(sessionKey, entry);
      return window;
    },
    note(sessionKey, sessionId, appended) {
      const entry = entries.peek(sessionKey);
      const last = entry?.messages[entry.messages.length - 1];
      if (!entry || !last || entry.sessionId !== sessionId || appended[0]?.seq !== last.seq + 1) return;
      take(sessionKey);
      append(entry, appended, 'back');
      put(sessionKey, entry);
    },
    forget(sessionKey) {
      take(sessionKey);
    },
    size: () => entries.size,
    bytes: () => entries.calculatedSize,
  };
}
