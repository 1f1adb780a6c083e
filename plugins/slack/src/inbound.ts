import type { ChatType, InboundMessage, MediaAttachment } from '@colloquy/core';
import type { SlackConfig } from './config.js';

/** The channel id of this plugin: the `channel` of its delivery contexts and session keys. */
export const SLACK_CHANNEL_ID = 'slack';

/** The fields of a Slack `message` event the plugin reads. */
export interface SlackMessageEvent {
  type: 'message';
  subtype?: string;
  channel: string;
  channel_type?: string;
  user?: string;
  bot_id?: string;
  text?: string;
  ts: string;
  thread_ts?: string;
  files?: { id: string; name?: string; mimetype?: string; size?: number; url_private?: string }[];
}

/** Message subtypes that are people talking; edits, deletions, joins and bot posts are not. */
const CONVERSATION_SUBTYPES = new Set([undefined, 'file_share', 'thread_broadcast']);

/** Whether an event is a person's message the bot should see (not a bot's, an edit, a join). */
export function isPersonMessage(event: SlackMessageEvent): event is SlackMessageEvent & { user: string } {
  return CONVERSATION_SUBTYPES.has(event.subtype) && event.bot_id === undefined && event.user !== undefined;
}

/**
 * The chat type of a conversation: a DM (`im`) is `direct`, a group DM (`mpim`) a `group`, and
 * public and private channels are `channel`. Without `channel_type` (slash commands), the id's
 * first letter says it: `D` for DMs, `G` for group DMs.
 */
export function chatTypeOf(conversationId: string, channelType?: string): ChatType {
  const kind =
    channelType ?? (conversationId.startsWith('D') ? 'im' : conversationId.startsWith('G') ? 'mpim' : '');
  if (kind === 'im') return 'direct';
  if (kind === 'mpim') return 'group';
  return 'channel';
}

/** Whether the text mentions the bot user (`<@U…>`, as Slack writes a mention). */
export function mentionsUser(text: string, userId: string): boolean {
  return text.includes(`<@${userId}>`) || text.includes(`<@${userId}|`);
}

/**
 * Slack's markup as a person reads it: the bot's own mention is removed (the model is told it was
 * addressed through `mentionsBot`), other mentions read `@U…`, channels `#name`, links `text (url)`,
 * and the entities `&amp;`, `&lt;`, `&gt;` their characters.
 *
 * @param text - the `text` of the event
 * @param botUserId - the bot's user id
 */
export function readableText(text: string, botUserId: string): string {
  return text
    .replace(new RegExp(`\\s*<@${botUserId}(\\|[^>]*)?>\\s*`, 'g'), ' ')
    .replace(/<([^<>|]+)(?:\|([^<>]*))?>/g, (_, target: string, label: string | undefined) => {
      if (target.startsWith('@')) return label ? `@${label}` : target;
      if (target.startsWith('#')) return `#${label ?? target.slice(1)}`;
      if (target.startsWith('!')) return `@${(label ?? target.slice(1)).replace(/^subteam\^/, '')}`;
      return label && label !== target ? `${label} (${target})` : target;
    })
    .replace(/&(amp|lt|gt);/g, (_, name: string) => ({ amp: '&', lt: '<', gt: '>' })[name] ?? '')
    .trim();
}

/** A Slack file as a media attachment; `ref` is its `url_private` (downloaded with the bot token). */
function toMedia(file: NonNullable<SlackMessageEvent['files']>[number], caption: string): MediaAttachment {
  const mime = file.mimetype ?? '';
  const kind: MediaAttachment['kind'] = mime.startsWith('image/')
    ? 'image'
    : mime.startsWith('audio/')
      ? 'audio'
      : mime.startsWith('video/')
        ? 'video'
        : 'document';
  return {
    kind,
    ...(file.mimetype !== undefined ? { mimeType: file.mimetype } : {}),
    ...(file.name !== undefined ? { fileName: file.name } : {}),
    ...(file.size !== undefined ? { size: file.size } : {}),
    ref: file.url_private ?? file.id,
    ...(caption !== '' ? { caption } : {}),
  };
}

/**
 * Normalises a person's Slack message. A DM's chat is the person (so replies find them after a
 * restart); a thread reply carries its parent's `ts` as `threadId`.
 *
 * @param event - a message for which {@link isPersonMessage} holds
 * @param input - the account, the bot user and whether the message addresses the bot
 */
export function toInboundMessage(
  event: SlackMessageEvent & { user: string },
  input: { accountId: string; botUserId: string; mentionsBot: boolean },
): InboundMessage {
  const type = chatTypeOf(event.channel, event.channel_type);
  const text = readableText(event.text ?? '', input.botUserId);
  const media = (event.files ?? []).map((file) => toMedia(file, text));
  return {
    channel: SLACK_CHANNEL_ID,
    accountId: input.accountId,
    chat: { type, id: type === 'direct' ? event.user : event.channel },
    sender: { id: event.user },
    ...(event.thread_ts !== undefined && event.thread_ts !== event.ts ? { threadId: event.thread_ts } : {}),
    text,
    ...(media.length > 0 ? { media } : {}),
    mentionsBot: input.mentionsBot,
    messageId: event.ts,
    timestamp: Math.round(Number(event.ts) * 1000),
  };
}

/** Why a message is dropped before the runtime sees it. */
export type AccessDecision = { allowed: true } | { allowed: false; reason: string };

/**
 * Applies the allowlists: `allowChannels` (DMs are not channels and pass), then `allowUsers` of the
 * conversation, else the global one.
 */
export function checkAccess(
  config: SlackConfig,
  conversationId: string,
  userId: string,
  direct: boolean,
): AccessDecision {
  const listed = (list: readonly string[] | undefined, id: string): boolean =>
    list === undefined || list.length === 0 || list.includes(id);
  if (!direct && !listed(config.allowChannels, conversationId)) {
    return { allowed: false, reason: 'conversation not in allowChannels' };
  }
  const users = config.channels[conversationId]?.allowUsers ?? config.allowUsers;
  if (!listed(users, userId)) return { allowed: false, reason: 'user not in allowUsers' };
  return { allowed: true };
}

/** Whether a channel or group DM message must mention the bot to be answered. */
export function requiresMention(config: SlackConfig, conversationId: string): boolean {
  return config.channels[conversationId]?.requireMention ?? config.requireMentionByDefault;
}
