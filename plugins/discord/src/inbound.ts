import type { InboundMessage, MediaAttachment } from '@colloquy/core';
import type { Attachment, ChatInputCommandInteraction, Message, Sticker, TextBasedChannel } from 'discord.js';
import type { MessageOrigin } from './access-policy.js';

/** The plugin id, also the `channel` of every inbound message and delivery context. */
export const DISCORD_CHANNEL_ID = 'discord';

/**
 * Whether a message must be ignored before any other check: messages of bots (this one included),
 * webhooks and system messages. This is what keeps two bots from talking in a loop.
 */
export function isIgnoredAuthor(message: Message): boolean {
  return message.author.bot || message.webhookId !== null || message.system;
}

/** Where a message was posted, for the allowlists and mention gating. */
export function originOfMessage(message: Message): MessageOrigin {
  return originOf(message.guildId, message.channel, message.author.id);
}

/** Where a slash command was run. */
export function originOfInteraction(interaction: ChatInputCommandInteraction): MessageOrigin {
  return originOf(interaction.guildId, interaction.channel, interaction.user.id, interaction.channelId);
}

function originOf(
  guildId: string | null,
  channel: TextBasedChannel | null,
  userId: string,
  channelId = channel?.id ?? '',
): MessageOrigin {
  const parentId = channel?.isThread() ? (channel.parentId ?? undefined) : undefined;
  return guildId === null ? { channelId, userId } : { guildId, channelId, parentId, userId };
}

/** True when the message mentions the bot, its managed role, or replies to one of its messages. */
export function mentionsUser(message: Message, botUserId: string): boolean {
  const { mentions } = message;
  if (mentions.users.has(botUserId)) return true;
  if (mentions.repliedUser?.id === botUserId) return true;
  return mentions.roles.some((role) => role.tags?.botId === botUserId);
}

/**
 * Normalises a discord.js message. Direct messages are keyed by the user (chat id = user id); guild
 * messages by their channel, and a thread's messages by the parent channel plus `threadId`.
 *
 * @param message - the discord.js message
 * @param input - the account, the bot's user id and whether the message counts as addressed to it
 * @returns the message for `ctx.receive`
 */
export function toInboundMessage(
  message: Message,
  input: { accountId: string; botUserId: string; mentionsBot: boolean },
): InboundMessage {
  const { channel } = message;
  const direct = message.guildId === null;
  const thread = channel.isThread();
  const chatId = direct ? message.author.id : thread ? (channel.parentId ?? channel.id) : channel.id;
  const title = direct ? undefined : thread ? (channel.parent?.name ?? undefined) : channelName(channel);
  const media = [
    ...message.attachments.map((attachment) => toMedia(attachment)),
    ...message.stickers.map((sticker) => stickerMedia(sticker)),
  ];
  const inbound: InboundMessage = {
    channel: DISCORD_CHANNEL_ID,
    accountId: input.accountId,
    chat: { type: direct ? 'direct' : 'channel', id: chatId, ...(title ? { title } : {}) },
    sender: {
      id: message.author.id,
      name: message.member?.displayName ?? message.author.globalName ?? message.author.username,
      username: message.author.username,
      isBot: message.author.bot,
    },
    text: stripBotMention(message.content, input.botUserId),
    mentionsBot: input.mentionsBot,
    messageId: message.id,
    timestamp: message.createdTimestamp,
  };
  if (thread) inbound.threadId = channel.id;
  if (media.length > 0) inbound.media = media;
  if (message.reference?.messageId) inbound.replyToMessageId = message.reference.messageId;
  return inbound;
}

/**
 * Normalises a slash command as a message whose text is `/<name> <args>`, always addressed to the bot.
 */
export function interactionToInbound(
  interaction: ChatInputCommandInteraction,
  input: { accountId: string; args: string },
): InboundMessage {
  const { channel, user } = interaction;
  const direct = interaction.guildId === null;
  const thread = channel?.isThread() ?? false;
  const parentId = channel?.isThread() ? channel.parentId : null;
  const inbound: InboundMessage = {
    channel: DISCORD_CHANNEL_ID,
    accountId: input.accountId,
    chat: { type: direct ? 'direct' : 'channel', id: direct ? user.id : (parentId ?? interaction.channelId) },
    sender: { id: user.id, name: user.globalName ?? user.username, username: user.username, isBot: user.bot },
    text: `/${interaction.commandName} ${input.args}`.trim(),
    mentionsBot: true,
    messageId: interaction.id,
    timestamp: interaction.createdTimestamp,
  };
  if (thread) inbound.threadId = interaction.channelId;
  return inbound;
}

function channelName(channel: TextBasedChannel): string | undefined {
  return 'name' in channel && typeof channel.name === 'string' ? channel.name : undefined;
}

/** Removes `<@id>` / `<@!id>` mentions of the bot, so the model reads what was asked. */
export function stripBotMention(content: string, botUserId: string): string {
  return content
    .replace(new RegExp(`<@!?${botUserId}>`, 'g'), ' ')
    .replace(/[ \t]{2,}/g, ' ')
    .trim();
}

/** An attachment's metadata for the model: kind, type, name, size, URL and caption. */
export function toMedia(attachment: Attachment): MediaAttachment {
  const mimeType = attachment.contentType ?? undefined;
  // Voice messages are audio attachments that carry a waveform.
  const voice = attachment.waveform !== null;
  const media: MediaAttachment = {
    kind: voice ? 'voice' : mediaKind(mimeType),
    fileName: attachment.name,
    size: attachment.size,
    ref: attachment.url,
  };
  if (mimeType !== undefined) media.mimeType = mimeType;
  if (attachment.description) media.caption = attachment.description;
  if (attachment.duration !== null) media.durationSeconds = attachment.duration;
  return media;
}

function stickerMedia(sticker: Sticker): MediaAttachment {
  return { kind: 'sticker', fileName: sticker.name, ref: sticker.url };
}

function mediaKind(mimeType: string | undefined): MediaAttachment['kind'] {
  if (mimeType?.startsWith('image/')) return 'image';
  if (mimeType?.startsWith('audio/')) return 'audio';
  if (mimeType?.startsWith('video/')) return 'video';
  return 'document';
}
