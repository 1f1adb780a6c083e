import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ConformanceInbound, runChannelPluginConformance } from '@colloquy/testkit/conformance';
import { FakeTelegram } from '@colloquy/testkit/telegram-fake';
import type { Message } from 'grammy/types';
import { createTelegramPlugin } from '../src/index.js';

const TOKEN = '2002:conformance-token';
const BOT = { id: 2002, username: 'conformance_bot' };
const GROUP_ID = '-100200';

/** Turns a platform-neutral conformance message into a Telegram update, as Telegram would send it. */
function toTelegramMessage(
  fake: FakeTelegram,
  m: ConformanceInbound,
): Partial<Message> & { chat: Message['chat'] } {
  const from = { id: Number(m.sender.id), is_bot: false, first_name: m.sender.name ?? `User ${m.sender.id}` };
  const chat =
    m.chatType === 'direct'
      ? { id: Number(m.sender.id), type: 'private' as const, first_name: from.first_name }
      : { id: Number(m.chatId), type: 'supergroup' as const, title: 'Conformance', is_forum: true as const };
  const mention = `@${BOT.username}`;
  const text = m.mentionBot && m.chatType !== 'direct' ? `${mention} ${m.text}` : m.text;
  return {
    message_id: fake.nextMessageId(chat.id),
    chat,
    from,
    text,
    ...(text.startsWith(mention)
      ? { entities: [{ type: 'mention' as const, offset: 0, length: mention.length }] }
      : {}),
    ...(m.threadId !== undefined ? { message_thread_id: Number(m.threadId), is_topic_message: true } : {}),
  };
}

runChannelPluginConformance('telegram', async () => {
  const fake = await FakeTelegram.start();
  fake.addBot(TOKEN, BOT);
  fake.addChat(GROUP_ID, { type: 'supergroup', forum: true, title: 'Conformance' });
  fake.addChat('101', { type: 'private' });
  fake.addChat('102', { type: 'private' });
  const stateDir = await mkdtemp(join(tmpdir(), 'colloquy-tg-conformance-'));
  const plugin = createTelegramPlugin({
    config: { accounts: [{ token: TOKEN }], dmPolicy: 'open' },
    apiRoot: fake.apiRoot,
    stateDir,
    pollTimeoutSeconds: 1,
    startTimeoutMs: 3000,
  });
  return {
    plugin,
    accountId: 'default',
    peers: [
      { id: '101', name: 'Ada' },
      { id: '102', name: 'Bo' },
    ],
    // Channel posts carry no user sender in the Bot API, so the suite's sender checks cannot apply;
    // test/plugin.test.ts covers channel posts.
    chats: { group: GROUP_ID },
    sendTarget: { channel: 'telegram', to: '101', accountId: 'default' },
    threadParent: { to: { channel: 'telegram', to: GROUP_ID, accountId: 'default' }, chatType: 'group' },
    async ready() {
      await fake.waitFor(() => fake.hasPendingPoll(TOKEN) || undefined, 3000, 'the first long poll');
    },
    async inject(m) {
      const { message } = fake.pushMessage(TOKEN, toTelegramMessage(fake, m));
      return { messageId: String(message.message_id) };
    },
    readSent: () =>
      fake.sent.map((s) => ({
        messageId: String(s.messageId),
        chatId: s.chatId,
        text: s.text,
        ...(s.threadId !== undefined ? { threadId: String(s.threadId) } : {}),
        ...(s.deleted ? { deleted: true } : {}),
      })),
    isReleased: () => !fake.hasPendingPoll(TOKEN),
    async cleanup() {
      await fake.close();
      await rm(stateDir, { recursive: true, force: true });
    },
  };
});
