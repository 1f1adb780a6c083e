import type { Message } from 'grammy/types';
import { describe, expect, it } from 'vitest';
import { normalizeMessage } from './normalize-message.js';

const bot = { id: 777, username: 'colloquy_bot' };
const alice = { id: 42, is_bot: false, first_name: 'Alice', last_name: 'A', username: 'alice' };
const group = { id: -1001, type: 'supergroup', title: 'Team', is_forum: true } as Message['chat'];
const dm = { id: 42, type: 'private', first_name: 'Alice' } as Message['chat'];

function msg(partial: Partial<Message>): Message {
  return { message_id: 10, date: 1_700_000_000, chat: group, from: alice, ...partial } as Message;
}

describe('normalizeMessage', () => {
  it('maps a private chat to a direct message that addresses the bot', () => {
    const out = normalizeMessage(msg({ chat: dm, text: 'hi' }), bot, 'main');
    expect(out?.addressed).toBe(true);
    expect(out?.message).toEqual({
      channel: 'telegram',
      accountId: 'main',
      chat: { type: 'direct', id: '42' },
      sender: { id: '42', name: 'Alice A', username: 'alice', isBot: false },
      text: 'hi',
      mentionsBot: true,
      messageId: '10',
      timestamp: 1_700_000_000_000,
    });
  });

  it('does not treat a plain group message as addressed', () => {
    const out = normalizeMessage(msg({ text: 'hello all' }), bot, 'main');
    expect(out?.message.chat).toEqual({ type: 'group', id: '-1001', title: 'Team' });
    expect(out?.addressed).toBe(false);
  });

  it('detects @mentions, text mentions, replies to the bot and commands', () => {
    const mention = msg({
      text: 'hey @Colloquy_Bot look',
      entities: [{ type: 'mention', offset: 4, length: 13 }],
    });
    expect(normalizeMessage(mention, bot, 'main')?.addressed).toBe(true);
    const other = msg({ text: 'hey @other_bot', entities: [{ type: 'mention', offset: 4, length: 10 }] });
    expect(normalizeMessage(other, bot, 'main')?.addressed).toBe(false);
    const textMention = msg({
      text: 'hey bot',
      entities: [
        { type: 'text_mention', offset: 4, length: 3, user: { id: 777, is_bot: true, first_name: 'B' } },
      ],
    });
    expect(normalizeMessage(textMention, bot, 'main')?.addressed).toBe(true);
    const reply = msg({
      text: 'yes',
      reply_to_message: { message_id: 5, from: { id: 777 } } as Message['reply_to_message'],
    });
    expect(normalizeMessage(reply, bot, 'main')?.message.replyToMessageId).toBe('5');
    expect(normalizeMessage(reply, bot, 'main')?.addressed).toBe(true);
    const command = msg({
      text: '/new@colloquy_bot now',
      entities: [{ type: 'bot_command', offset: 0, length: 17 }],
    });
    expect(normalizeMessage(command, bot, 'main')).toMatchObject({
      addressed: true,
      message: { text: '/new now' },
    });
    const foreign = msg({
      text: '/new@other_bot',
      entities: [{ type: 'bot_command', offset: 0, length: 14 }],
    });
    expect(normalizeMessage(foreign, bot, 'main')).toMatchObject({
      addressed: false,
      message: { text: '/new@other_bot' },
    });
  });

  it('carries the forum topic as threadId and ignores the implicit reply to the topic root', () => {
    const inTopic = msg({
      text: 'in topic',
      message_thread_id: 99,
      is_topic_message: true,
      reply_to_message: { message_id: 99, from: { id: 777 } } as Message['reply_to_message'],
    });
    const out = normalizeMessage(inTopic, bot, 'main');
    expect(out?.message.threadId).toBe('99');
    expect(out?.message.replyToMessageId).toBeUndefined();
    expect(out?.addressed).toBe(false);
  });

  it('maps channel posts to channel messages sent by the channel', () => {
    const post = msg({
      chat: { id: -1002, type: 'channel', title: 'News' } as Message['chat'],
      from: undefined,
      sender_chat: { id: -1002, type: 'channel', title: 'News', username: 'news' } as Message['sender_chat'],
      text: 'post',
    });
    expect(normalizeMessage(post, bot, 'main')?.message).toMatchObject({
      chat: { type: 'channel', id: '-1002' },
      sender: { id: '-1002', name: 'News', username: 'news' },
    });
  });

  it('lists photos (largest size), documents and voice notes as attachments', () => {
    const photo = msg({
      chat: dm,
      caption: 'look',
      photo: [
        { file_id: 'small', file_unique_id: 's', width: 90, height: 90, file_size: 1000 },
        { file_id: 'big', file_unique_id: 'b', width: 1280, height: 960, file_size: 90_000 },
      ],
    });
    expect(normalizeMessage(photo, bot, 'main')?.message).toMatchObject({
      text: 'look',
      media: [{ kind: 'image', ref: 'big', size: 90_000, mimeType: 'image/jpeg', caption: 'look' }],
    });
    const doc = msg({
      chat: dm,
      document: {
        file_id: 'd1',
        file_unique_id: 'd',
        file_name: 'r.pdf',
        mime_type: 'application/pdf',
        file_size: 5,
      },
    });
    expect(normalizeMessage(doc, bot, 'main')?.message.media).toEqual([
      { kind: 'document', ref: 'd1', mimeType: 'application/pdf', fileName: 'r.pdf', size: 5 },
    ]);
    const voice = msg({
      chat: dm,
      voice: { file_id: 'v1', file_unique_id: 'v', duration: 3, mime_type: 'audio/ogg' },
    });
    expect(normalizeMessage(voice, bot, 'main')?.message.media).toEqual([
      { kind: 'voice', ref: 'v1', mimeType: 'audio/ogg', durationSeconds: 3 },
    ]);
  });

  it('skips service messages and the bot own messages', () => {
    expect(normalizeMessage(msg({ new_chat_members: [alice] }), bot, 'main')).toBeUndefined();
    expect(
      normalizeMessage(msg({ text: 'me', from: { id: 777, is_bot: true, first_name: 'B' } }), bot, 'main'),
    ).toBeUndefined();
  });
});
