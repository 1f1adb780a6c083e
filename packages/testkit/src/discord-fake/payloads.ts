/**
 * Builders of Discord API objects (v10 shapes) for the fake Discord. Only the fields discord.js
 * reads are filled in, with the values Discord would send.
 */
import type { APIAttachment, APIChannel, APIGuildMember, APIMessage, APIUser } from 'discord.js';

const DISCORD_EPOCH = 1_420_070_400_000n;
let increment = 0n;

/** A fresh snowflake (time-ordered, unique within the process). */
export function snowflake(at: number = Date.now()): string {
  increment = (increment + 1n) % 4096n;
  return (((BigInt(at) - DISCORD_EPOCH) << 22n) | increment).toString();
}

/** A person or a bot as the fake knows it. */
export interface FakeUser {
  /** The user's snowflake id. */
  id: string;
  /** The unique user name. */
  username: string;
  /** The display name, when set. */
  globalName?: string;
  /** True for bot users. */
  bot?: boolean;
}

export function userPayload(user: FakeUser): APIUser {
  const payload: APIUser = {
    id: user.id,
    username: user.username,
    discriminator: '0',
    global_name: user.globalName ?? null,
    avatar: null,
  };
  if (user.bot) payload.bot = true;
  return payload;
}

export function memberPayload(user: FakeUser): APIGuildMember {
  return {
    user: userPayload(user),
    roles: [],
    joined_at: new Date(0).toISOString(),
    deaf: false,
    mute: false,
    flags: 0 as APIGuildMember['flags'],
  };
}

export function textChannelPayload(guildId: string, id: string, name: string): APIChannel {
  return {
    id,
    type: 0,
    guild_id: guildId,
    name,
    position: 0,
    permission_overwrites: [],
    nsfw: false,
    topic: null,
    last_message_id: null,
    parent_id: null,
    rate_limit_per_user: 0,
    flags: 0,
  } as unknown as APIChannel;
}

/** A forum channel (type 15): posts are threads; messages cannot be sent to it directly. */
export function forumChannelPayload(guildId: string, id: string, name: string): APIChannel {
  return {
    ...(textChannelPayload(guildId, id, name) as object),
    type: 15,
    available_tags: [],
    default_reaction_emoji: null,
    default_thread_rate_limit_per_user: 0,
    default_sort_order: null,
    default_forum_layout: 0,
  } as unknown as APIChannel;
}

/** A guild channel of the fake: a text channel, or a forum when `forum` is set. */
export function guildChannelPayload(
  guildId: string,
  channel: { id: string; name: string; forum?: true },
): APIChannel {
  return channel.forum
    ? forumChannelPayload(guildId, channel.id, channel.name)
    : textChannelPayload(guildId, channel.id, channel.name);
}

export function threadPayload(input: {
  guildId: string;
  parentId: string;
  id: string;
  name: string;
  ownerId: string;
  autoArchiveMinutes: number;
}): APIChannel {
  return {
    id: input.id,
    type: 11,
    guild_id: input.guildId,
    parent_id: input.parentId,
    name: input.name,
    owner_id: input.ownerId,
    last_message_id: null,
    rate_limit_per_user: 0,
    message_count: 0,
    member_count: 1,
    total_message_sent: 0,
    flags: 0,
    thread_metadata: {
      archived: false,
      auto_archive_duration: input.autoArchiveMinutes,
      archive_timestamp: new Date().toISOString(),
      locked: false,
    },
  } as unknown as APIChannel;
}

export function dmChannelPayload(id: string, recipient: FakeUser): APIChannel {
  return {
    id,
    type: 1,
    recipients: [userPayload(recipient)],
    last_message_id: null,
    flags: 0,
  } as unknown as APIChannel;
}

export function messagePayload(input: {
  id: string;
  channelId: string;
  guildId?: string;
  author: FakeUser;
  content: string;
  mentions: FakeUser[];
  attachments?: APIAttachment[];
  referenced?: APIMessage;
  webhookId?: string;
  flags?: number;
}): APIMessage & { guild_id?: string; member?: Omit<APIGuildMember, 'user'> } {
  const message: APIMessage & { guild_id?: string; member?: Omit<APIGuildMember, 'user'> } = {
    id: input.id,
    channel_id: input.channelId,
    author: userPayload(input.author),
    content: input.content,
    timestamp: new Date().toISOString(),
    edited_timestamp: null,
    tts: false,
    mention_everyone: false,
    mentions: input.mentions.map(userPayload),
    mention_roles: [],
    attachments: input.attachments ?? [],
    embeds: [],
    pinned: false,
    type: input.referenced ? 19 : 0,
    flags: input.flags ?? 0,
  };
  if (input.guildId !== undefined) {
    message.guild_id = input.guildId;
    const { user: _user, ...member } = memberPayload(input.author);
    message.member = member;
  }
  if (input.referenced) {
    message.message_reference = {
      message_id: input.referenced.id,
      channel_id: input.referenced.channel_id,
      ...(input.guildId ? { guild_id: input.guildId } : {}),
    };
    message.referenced_message = input.referenced;
  }
  if (input.webhookId) message.webhook_id = input.webhookId;
  return message;
}
