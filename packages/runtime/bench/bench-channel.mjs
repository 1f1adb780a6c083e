// The channel plugin of the runtime benches: it sends nothing anywhere and tells whoever waits for a
// chat's next reply when it was sent.
import { performance } from 'node:perf_hooks';

/** A channel plugin that hands each reply to whoever waits for it in that chat. */
export function createBenchChannel() {
  const waiting = new Map();
  let counter = 0;
  return {
    id: 'bench',
    capabilities: {
      threads: false,
      edits: false,
      reactions: false,
      media: false,
      typing: true,
      maxTextLength: 4096,
      markdown: 'commonmark',
    },
    start: async () => {},
    stop: async () => {},
    sendTyping: async () => {},
    async send(to) {
      const at = performance.now();
      const resolve = waiting.get(to.to);
      waiting.delete(to.to);
      resolve?.(at);
      const messageId = `out-${++counter}`;
      return { messageId, messageIds: [messageId] };
    },
    /** Resolves with the time the next reply to `chatId` was sent. */
    nextReply(chatId) {
      return new Promise((resolve) => waiting.set(chatId, resolve));
    },
  };
}
