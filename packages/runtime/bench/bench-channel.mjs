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
      // A reply answers every message of its chat still waiting: the runtime folds messages that
      // queued behind a running turn into the next turn, which sends one reply for them all.
      for (const resolve of waiting.get(to.to) ?? []) resolve(at);
      waiting.delete(to.to);
      const messageId = `out-${++counter}`;
      return { messageId, messageIds: [messageId] };
    },
    /** Resolves with the time the next reply to `chatId` was sent. */
    nextReply(chatId) {
      return new Promise((resolve) => {
        const list = waiting.get(chatId);
        if (list) list.push(resolve);
        else waiting.set(chatId, [resolve]);
      });
    },
  };
}

/** The DM `text` of user `session` to the bench channel (its text is its message id). */
export function benchInbound(session, text) {
  return {
    channel: 'bench',
    accountId: 'default',
    chat: { type: 'direct', id: `chat-${session}` },
    sender: { id: `user-${session}`, name: `User ${session}` },
    text,
    mentionsBot: true,
    messageId: text,
  };
}
