import type { InboundMessage } from '@colloquy/core';
import type { GroupContextConfig } from '@colloquy/core/internal';
import { LRUCache } from 'lru-cache';

/** One group message that did not address the bot, as the model is shown it later. */
export interface GroupContextEntry {
  /** Who wrote it: display name, else username, else platform id. */
  sender: string;
  text: string;
  /** Epoch ms. */
  at: number;
}

/** Options of {@link createGroupContextWindow}. */
export interface GroupContextWindowOptions {
  config: GroupContextConfig;
  /** At most this many group sessions keep a window; the least recently written is dropped. Default 1000. */
  maxGroups?: number;
}

/**
 * The runtime's memory of recent un-addressed group messages, per group session. It is bounded on
 * every axis: messages per group (`maxMessages`), their age (`maxAgeMinutes`), characters per
 * message (`maxCharsPerMessage`) and the number of groups (`maxGroups`, least recently written
 * dropped first). It lives in memory only: a restart forgets it, and with a cluster each instance
 * keeps what it received.
 */
export interface GroupContextWindow {
  /** Whether messages of this inbound's group are kept at all (`enabled` and not in `exclude`). */
  accepts(inbound: InboundMessage, sessionKey: string): boolean;
  /** Remembers an un-addressed message under its session key. */
  record(sessionKey: string, inbound: InboundMessage, now: number): void;
  /** Removes and returns the session's window (oldest first), dropping entries older than `maxAgeMinutes`. */
  take(sessionKey: string, now: number): GroupContextEntry[];
  /** How many sessions hold a window (for tests and status). */
  readonly size: number;
}

/**
 * Creates the bounded window of un-addressed group messages the runtime keeps.
 *
 * @param options - `session.groupContext` and the group cap
 * @returns the window
 */
export function createGroupContextWindow(options: GroupContextWindowOptions): GroupContextWindow {
  const { config } = options;
  const maxGroups = options.maxGroups ?? 1000;
  const maxAgeMs = config.maxAgeMinutes * 60_000;
  const windows = new LRUCache<string, GroupContextEntry[]>({ max: maxGroups });
  const fresh = (entries: GroupContextEntry[], now: number) => entries.filter((e) => now - e.at <= maxAgeMs);

  return {
    accepts(inbound, sessionKey) {
      if (!config.enabled || inbound.chat.type === 'direct') return false;
      return !config.exclude.some(
        (rule) =>
          (rule.channel === undefined || rule.channel === inbound.channel) &&
          (rule.chatId === undefined || rule.chatId === inbound.chat.id) &&
          (rule.keyPrefix === undefined || sessionKey.startsWith(rule.keyPrefix)),
      );
    },
    record(sessionKey, inbound, now) {
      const text = inbound.text.trim();
      if (text === '') return;
      const entries = fresh(windows.get(sessionKey) ?? [], now);
      entries.push({
        sender: inbound.sender.name ?? inbound.sender.username ?? inbound.sender.id,
        text: text.length > config.maxCharsPerMessage ? `${text.slice(0, config.maxCharsPerMessage)}…` : text,
        at: now,
      });
      windows.set(sessionKey, entries.slice(-config.maxMessages)); // the most recently written now
    },
    take(sessionKey, now) {
      const entries = windows.get(sessionKey);
      if (entries === undefined) return [];
      windows.delete(sessionKey);
      return fresh(entries, now);
    },
    get size() {
      return windows.size;
    },
  };
}

/** The first line of the block the model reads before an addressed group message. */
export const GROUP_CONTEXT_HEADER = 'Recent messages in this group, not addressed to you (context only):';

/**
 * Renders a window as the one user-role block placed before the addressed message.
 *
 * @param entries - the window, oldest first
 * @returns the block's text
 */
export function formatGroupContext(entries: readonly GroupContextEntry[]): string {
  return [GROUP_CONTEXT_HEADER, ...entries.map((e) => `${e.sender}: ${e.text}`)].join('\n');
}
