import { runChannelPluginConformance } from '@colloquy/testkit/conformance';
import { createRelayChannel, RelayServer } from '../relay-channel.js';

// The definition of done for a channel: the testkit conformance suite, with a fixture that tells
// it how to make the platform deliver a message and what the platform received.
runChannelPluginConformance('relay', () => {
  const server = new RelayServer();
  return {
    plugin: createRelayChannel({ server }),
    accountId: 'default',
    peers: [
      { id: 'ada', name: 'ada' },
      { id: 'bob', name: 'bob' },
    ],
    chats: { group: 'room:general' },
    sendTarget: { channel: 'relay', to: 'ada', accountId: 'default' },
    async inject(message) {
      const room = message.chatType === 'direct' ? `dm:${message.sender.id}` : message.chatId!;
      const text = message.mentionBot ? `@bot ${message.text}` : message.text;
      return { messageId: server.post(room, message.sender.id, text).id };
    },
    readSent: () =>
      server.posted
        .filter((m) => m.from === 'bot')
        .map((m) => ({ messageId: m.id, chatId: m.room.replace(/^dm:/, ''), text: m.text })),
    isReleased: () => !server.connected,
  };
});
