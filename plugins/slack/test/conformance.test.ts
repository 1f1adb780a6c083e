import { runChannelPluginConformance } from '@colloquy/testkit/conformance';
import { FakeSlack } from '@colloquy/testkit/slack-fake';
import { createSlackPlugin } from '../src/index.js';

runChannelPluginConformance('slack', async () => {
  const fake = await FakeSlack.start();
  const ada = fake.addUser('ada');
  const bob = fake.addUser('bob');
  const general = fake.channelId('general');
  const group = fake.groupDm();
  const plugin = createSlackPlugin({
    config: { accounts: [{ accountId: 'main', botToken: fake.botToken, appToken: fake.appToken }] },
    apiUrl: fake.apiUrl,
  });
  return {
    plugin,
    accountId: 'main',
    peers: [
      { id: ada.id, name: 'ada' },
      { id: bob.id, name: 'bob' },
    ],
    chats: { channel: general, group },
    sendTarget: { channel: 'slack', to: ada.id, accountId: 'main' },
    threadParent: { to: { channel: 'slack', to: general, accountId: 'main' }, chatType: 'channel' },
    async inject(message) {
      const user = message.sender.id === ada.id ? ada : bob;
      const channel = message.chatType === 'direct' ? fake.dm(user) : (message.chatId ?? general);
      const text = message.mentionBot ? `<@${fake.botUser.id}> ${message.text}` : message.text;
      const sent = await fake.say({
        channel,
        user,
        text,
        ...(message.threadId !== undefined ? { threadTs: message.threadId } : {}),
      });
      return { messageId: sent.ts };
    },
    readSent: () =>
      fake.sentByBot.map((message) => {
        const conversation = fake.conversations.get(message.channel);
        return {
          messageId: message.ts,
          chatId: conversation?.type === 'im' ? conversation.user! : message.channel,
          text: message.text,
          ...(message.thread_ts !== undefined ? { threadId: message.thread_ts } : {}),
        };
      }),
    isReleased: () => fake.openSockets === 0,
    cleanup: () => fake.close(),
  };
});
