import type { ChatType, InboundMessage, MediaAttachment } from '@colloquy/core';
import type { Message, MessageEntity } from 'grammy/types';

/** The channel id of this plugin. */
export const TELEGRAM_CHANNEL = 'telegram';

/** Who the bot is, as needed to tell whether a message addresses it. */
export interface BotIdentity {
  id: number;
  username: string;
}

/** A normalised message and whether it addresses the bot on its own (mention, reply, command). */
export interface NormalizedMessage {
  /** `mentionsBot` is `addressed` here; gating by group config happens after. */
  message: InboundMessage;
  /** Mentioned by @username or text mention, replied to, or given a command (always true in DMs). */
  addressed: boolean;
}

/**
 * Turns a Telegram message or channel post into an {@link InboundMessage}.
 *
 * Private chats become `direct`, groups and supergroups `group`, channels `channel`. A message in
 * a forum topic carries the topic id as `threadId` (the General topic has none). A command
 * addressed to this bot (`/new@this_bot`) loses its `@this_bot` suffix.
 *
 * @param msg - the Telegram message
 * @param bot - the bot's identity (from getMe)
 * @param accountId - the Colloquy account receiving it
 * @returns the normalised message, or `undefined` for messages with nothing to answer (service
 *   messages, the bot's own messages)
 */
export function normalizeMessage(
  msg: Message,
  bot: BotIdentity,
  accountId: string,
): NormalizedMessage | undefined {
  if (msg.from?.id === bot.id) return undefined;
  const media = extractMedia(msg);
  const rawText = msg.text ?? msg.caption ?? '';
  if (rawText.trim() === '' && media.length === 0) return undefined;

  const chatType = toChatType(msg.chat.type);
  const entities = msg.entities ?? msg.caption_entities ?? [];
  const threadId = msg.is_topic_message && msg.message_thread_id ? String(msg.message_thread_id) : undefined;
  const reply = msg.reply_to_message;
  const repliesToTopicRoot = threadId !== undefined && reply?.message_id === msg.message_thread_id;
  const replyToMessageId = reply && !repliesToTopicRoot ? String(reply.message_id) : undefined;

  const command = commandTarget(rawText, entities);
  const addressed =
    chatType === 'direct' ||
    (command !== undefined && (command === '' || sameUsername(command, bot.username))) ||
    mentionsUsername(rawText, entities, bot) ||
    (reply !== undefined && !repliesToTopicRoot && reply.from?.id === bot.id);

  const text =
    command !== undefined && sameUsername(command, bot.username) ? stripCommandSuffix(rawText) : rawText;
  const sender = toSender(msg);
  const chatTitle = 'title' in msg.chat ? msg.chat.title : undefined;
  const message: InboundMessage = {
    channel: TELEGRAM_CHANNEL,
    accountId,
    chat: { type: chatType, id: String(msg.chat.id), ...(chatTitle ? { title: chatTitle } : {}) },
    sender,
    text,
    mentionsBot: addressed,
    messageId: String(msg.message_id),
    timestamp: msg.date * 1000,
    ...(threadId !== undefined ? { threadId } : {}),
    ...(replyToMessageId !== undefined ? { replyToMessageId } : {}),
    ...(media.length > 0 ? { media } : {}),
  };
  return { message, addressed };
}

function toChatType(type: Message['chat']['type']): ChatType {
  if (type === 'private') return 'direct';
  return type === 'channel' ? 'channel' : 'group';
}

function toSender(msg: Message): InboundMessage['sender'] {
  const user = msg.from;
  if (user && !(msg.sender_chat && user.is_bot && user.username === 'GroupAnonymousBot')) {
    const name = [user.first_name, user.last_name].filter(Boolean).join(' ');
    return {
      id: String(user.id),
      ...(name ? { name } : {}),
      ...(user.username ? { username: user.username } : {}),
      isBot: user.is_bot,
    };
  }
  const chat = msg.sender_chat ?? msg.chat;
  const title = 'title' in chat ? chat.title : undefined;
  const username = 'username' in chat ? chat.username : undefined;
  return { id: String(chat.id), ...(title ? { name: title } : {}), ...(username ? { username } : {}) };
}

/** The `@target` of a leading bot command: `''` when there is none, `undefined` without a command. */
function commandTarget(text: string, entities: readonly MessageEntity[]): string | undefined {
  const entity = entities.find((e) => e.type === 'bot_command' && e.offset === 0);
  if (!entity) return undefined;
  const command = text.slice(0, entity.length);
  const at = command.indexOf('@');
  return at === -1 ? '' : command.slice(at + 1);
}

function stripCommandSuffix(text: string): string {
  return text.replace(/^(\/[A-Za-z0-9_]+)@[A-Za-z0-9_]+/, '$1');
}

function mentionsUsername(text: string, entities: readonly MessageEntity[], bot: BotIdentity): boolean {
  return entities.some((e) => {
    if (e.type === 'text_mention') return e.user.id === bot.id;
    if (e.type !== 'mention') return false;
    return sameUsername(text.slice(e.offset + 1, e.offset + e.length), bot.username);
  });
}

function sameUsername(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}

/** Photos (largest size), documents, voice notes, audio, video, animations and stickers. */
function extractMedia(msg: Message): MediaAttachment[] {
  const media: MediaAttachment[] = [];
  const caption = msg.caption;
  const common = (size: number | undefined): Partial<MediaAttachment> => ({
    ...(size !== undefined ? { size } : {}),
    ...(caption ? { caption } : {}),
  });
  if (msg.photo && msg.photo.length > 0) {
    const largest = msg.photo.reduce((a, b) => (b.width * b.height > a.width * a.height ? b : a));
    media.push({ kind: 'image', mimeType: 'image/jpeg', ref: largest.file_id, ...common(largest.file_size) });
  }
  if (msg.document && !msg.animation) {
    const d = msg.document;
    media.push({
      kind: 'document',
      ref: d.file_id,
      ...(d.mime_type ? { mimeType: d.mime_type } : {}),
      ...(d.file_name ? { fileName: d.file_name } : {}),
      ...common(d.file_size),
    });
  }
  if (msg.voice) {
    const v = msg.voice;
    media.push({
      kind: 'voice',
      ref: v.file_id,
      mimeType: v.mime_type ?? 'audio/ogg',
      durationSeconds: v.duration,
      ...common(v.file_size),
    });
  }
  if (msg.audio) {
    const a = msg.audio;
    media.push({
      kind: 'audio',
      ref: a.file_id,
      durationSeconds: a.duration,
      ...(a.mime_type ? { mimeType: a.mime_type } : {}),
      ...(a.file_name ? { fileName: a.file_name } : {}),
      ...common(a.file_size),
    });
  }
  const video = msg.video ?? msg.animation;
  if (video) {
    media.push({
      kind: 'video',
      ref: video.file_id,
      durationSeconds: video.duration,
      ...(video.mime_type ? { mimeType: video.mime_type } : {}),
      ...(video.file_name ? { fileName: video.file_name } : {}),
      ...common(video.file_size),
    });
  }
  if (msg.video_note) {
    const v = msg.video_note;
    media.push({
      kind: 'video',
      ref: v.file_id,
      mimeType: 'video/mp4',
      durationSeconds: v.duration,
      ...common(v.file_size),
    });
  }
  if (msg.sticker) {
    const s = msg.sticker;
    const mimeType = s.is_video ? 'video/webm' : s.is_animated ? 'application/x-tgsticker' : 'image/webp';
    media.push({
      kind: 'sticker',
      ref: s.file_id,
      mimeType,
      ...(s.emoji ? { caption: s.emoji } : {}),
      ...(s.file_size !== undefined ? { size: s.file_size } : {}),
    });
  }
  return media;
}
