import type { StoredMessage, StoreOperations } from '@colloquy/core';
import { estimateMessageTokens } from './build-prompt.js';

/** Options of {@link createHistoryCache}. */
export interface HistoryCacheOptions {
  /** Sessions kept (least recently used dropped first). Default 512. */
  maxSessions?: number;
  /** Never hold or return more than this many messages per session. Default 2000. */
  maxMessages?: number;
  /** Newest messages read per turn to catch up with the store. Default 16. */
  probe?: number;
  /** Messages per store read when filling from older history. Default 64. */
  pageSize?: number;
}

/** The prompt history of sessions, read from the store incrementally. */
export interface HistoryCache {
  /**
   * The newest transcript messages of a session that fit `budgetTokens` (chars/4 estimate), oldest
   * first; the newest message is always included. Returned objects are shared: do not mutate them.
   */
  load(
    store: StoreOperations,
    sessionKey: string,
    sessionId: string,
    budgetTokens: number,
  ): Promise<StoredMessage[]>;
  /** Forgets a session (e.g. after it was deleted). */
  forget(sessionKey: string): void;
  /** Sessions held. */
  size(): number;
}

interface Entry {
  sessionId: string;
  /** Ascending, contiguous `seq`. */
  messages: StoredMessage[];
  tokens: number[];
  /** True when `messages[0]` is the first message of the transcript. */
  atStart: boolean;
}

/**
 * Creates the history cache the agent loop builds prompts from. Each turn reads only the newest
 * few messages (`probe`) and appends what is new; older messages are read only when the budget
 * reaches past what is held. The store stays the source of truth: a gap (more new messages than
 * `probe`), a shorter transcript or a new `sessionId` (the session was reset or re-created) makes
 * it read the tail again from scratch. So the cost of a turn follows what changed, not the length
 * of the transcript.
 *
 * @param options - bounds
 * @returns the cache
 */
export function createHistoryCache(options: HistoryCacheOptions = {}): HistoryCache {
  const maxSessions = options.maxSessions ?? 512;
  const maxMessages = options.maxMessages ?? 2000;
  const probe = options.probe ?? 16;
  const pageSize = options.pageSize ?? 64;
  const entries = new Map<string, Entry>();

  async function catchUp(store: StoreOperations, sessionKey: string, entry: Entry): Promise<boolean> {
    const page = await store.readTail(sessionKey, probe);
    const last = entry.messages[entry.messages.length - 1];
    if (!last) return false;
    const newest = page[page.length - 1];
    if (!newest || newest.seq < last.seq) return false;
    if (page[0]!.seq > last.seq + 1) return false;
    for (const message of page) {
      if (message.seq <= last.seq) continue;
      entry.messages.push(message);
      entry.tokens.push(estimateMessageTokens(message));
    }
    return true;
  }

  async function extendBackwards(store: StoreOperations, sessionKey: string, entry: Entry): Promise<void> {
    const oldest = entry.messages[0];
    const page = await store.readTail(sessionKey, pageSize, oldest ? { beforeSeq: oldest.seq } : undefined);
    if (page.length < pageSize) entry.atStart = true;
    if (page.length === 0) return;
    entry.messages.unshift(...page);
    entry.tokens.unshift(...page.map(estimateMessageTokens));
  }

  return {
    async load(store, sessionKey, sessionId, budgetTokens) {
      let entry = entries.get(sessionKey);
      entries.delete(sessionKey);
      if (entry && (entry.sessionId !== sessionId || !(await catchUp(store, sessionKey, entry)))) {
        entry = undefined;
      }
      entry ??= { sessionId, messages: [], tokens: [], atStart: false };
      entries.set(sessionKey, entry);
      if (entries.size > maxSessions) entries.delete(entries.keys().next().value!);

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
      if (first > 0) {
        entry.messages.splice(0, first);
        entry.tokens.splice(0, first);
        entry.atStart = false;
        first = 0;
      }
      return entry.messages.slice();
    },
    forget(sessionKey) {
      entries.delete(sessionKey);
    },
    size: () => entries.size,
  };
}
