import type { ChannelConformanceFixture } from '../src/conformance/index.js';
import { runChannelPluginConformance } from '../src/conformance/index.js';
import { createMemoryChannel, type MemoryChannelOptions } from '../src/index.js';

/** The memory channel as a "platform": inject plays the user, `sent` is what the platform received. */
function memoryFixture(options: MemoryChannelOptions): ChannelConformanceFixture {
  const channel = createMemoryChannel(options);
  return {
    plugin: channel,
    accountId: 'default',
    peers: [
      { id: 'alice', name: 'Alice' },
      { id: 'bob', name: 'Bob' },
    ],
    chats: { group: 'group-1', channel: 'news' },
    sendTarget: { channel: channel.id, to: 'alice', accountId: 'default' },
    threadParent: { to: { channel: channel.id, to: 'group-1', accountId: 'default' }, chatType: 'group' },
    async inject(message) {
      if (!channel.running) return undefined; // the platform has nobody to deliver to
      const sent = await channel.inject({
        text: message.mentionBot ? `@colloquy_bot ${message.text}` : message.text,
        chat:
          message.chatType === 'direct'
            ? { type: 'direct', id: message.sender.id }
            : { type: message.chatType, id: message.chatId ?? 'unknown' },
        sender: message.sender,
        ...(message.threadId !== undefined ? { threadId: message.threadId } : {}),
      });
      return { messageId: sent.messageId };
    },
    readSent: () =>
      channel.sent.map((m) => ({
        messageId: m.messageId,
        chatId: m.to.to,
        text: m.text,
        ...(m.to.threadId !== undefined ? { threadId: m.to.threadId } : {}),
      })),
    isReleased: () => !channel.running,
  };
}

runChannelPluginConformance('memory channel (threads, typing, 200-char messages)', () =>
  memoryFixture({ capabilities: { threads: true, threadKind: 'topic', maxTextLength: 200 } }),
);

runChannelPluginConformance('memory channel (defaults: no threads)', () =>
  memoryFixture({ id: 'memory2', capabilities: { typing: false } }),
);
