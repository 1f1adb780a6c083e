import { runChannelPluginConformance } from '@colloquy/testkit/conformance';
import { FakeDiscord } from '@colloquy/testkit/discord-fake';
import { createDiscordPlugin } from '../src/index.js';

const TOKEN = 'conformance-token';

runChannelPluginConformance('discord', async () => {
  const fake = await FakeDiscord.start({
    bots: [{ token: TOKEN, username: 'colloquy' }],
    guilds: [{ name: 'Conformance', channels: ['general'] }],
  });
  const ada = fake.addUser('ada');
  const bob = fake.addUser('bob');
  const general = fake.channelId('general');
  const bot = fake.bots[0]!;
  const plugin = createDiscordPlugin({
    config: { accounts: [{ accountId: 'main', token: TOKEN }] },
    rest: { api: fake.apiRoot },
  });
  return {
    plugin,
    accountId: 'main',
    peers: [
      { id: ada.id, name: 'ada' },
      { id: bob.id, name: 'bob' },
    ],
    chats: { channel: general },
    sendTarget: { channel: 'discord', to: ada.id, accountId: 'main' },
    threadParent: { to: { channel: 'discord', to: general, accountId: 'main' }, chatType: 'channel' },
    async inject(message) {
      const author = message.sender.id === ada.id ? ada : bob;
      const channelId =
        message.chatType === 'direct'
          ? fake.dmChannel(author)
          : (message.threadId ?? message.chatId ?? general);
      const content = message.mentionBot ? `<@${bot.user.id}> ${message.text}` : message.text;
      const sent = fake.say({ channelId, author, content });
      return { messageId: sent.id };
    },
    readSent: () =>
      fake.sentByBots.map((message) => ({
        messageId: message.id,
        text: message.content,
        ...fake.locate(message.channel_id),
        ...(fake.deletedMessageIds.includes(message.id) ? { deleted: true } : {}),
      })),
    isReleased: () => fake.openSockets === 0,
    cleanup: () => fake.close(),
  };
});
