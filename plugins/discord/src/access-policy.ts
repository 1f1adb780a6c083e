import type { DiscordConfig, DiscordGuildConfig } from './config.js';

/** Where a message or command came from, in Discord ids. */
export interface MessageOrigin {
  /** Unset for direct messages. */
  guildId?: string;
  /** The channel the message was posted in (for a thread: the thread). */
  channelId: string;
  /** For a thread: its parent channel. */
  parentId?: string;
  userId: string;
}

/** The outcome of the allowlist check. */
export type AccessDecision = { allowed: true } | { allowed: false; reason: string };

const permits = (list: readonly string[] | undefined, id: string | undefined): boolean =>
  list === undefined || list.length === 0 || (id !== undefined && list.includes(id));

/**
 * Checks the allowlists: `allowGuilds`, `allowChannels` (a thread passes through its parent) and the
 * most specific `allowUsers` (channel, then guild, then top level). Unset or empty lists allow all.
 *
 * @param config - the resolved `channels.discord` section
 * @param origin - where the message came from
 * @returns `{ allowed: true }` or the reason it is dropped
 */
export function checkAccess(config: DiscordConfig, origin: MessageOrigin): AccessDecision {
  if (origin.guildId === undefined) {
    return permits(config.allowUsers, origin.userId)
      ? { allowed: true }
      : { allowed: false, reason: `user ${origin.userId} is not in allowUsers` };
  }
  if (!permits(config.allowGuilds, origin.guildId)) {
    return { allowed: false, reason: `guild ${origin.guildId} is not in allowGuilds` };
  }
  if (
    config.allowChannels !== undefined &&
    config.allowChannels.length > 0 &&
    !config.allowChannels.includes(origin.channelId) &&
    !(origin.parentId !== undefined && config.allowChannels.includes(origin.parentId))
  ) {
    return { allowed: false, reason: `channel ${origin.channelId} is not in allowChannels` };
  }
  const [own, parent] = channelGates(config, origin);
  const users =
    own?.allowUsers ?? parent?.allowUsers ?? config.guilds[origin.guildId]?.allowUsers ?? config.allowUsers;
  return permits(users, origin.userId)
    ? { allowed: true }
    : { allowed: false, reason: `user ${origin.userId} is not allowed in channel ${origin.channelId}` };
}

/**
 * Whether a guild message must mention (or reply to) the bot to be answered: the channel's setting
 * (a thread inherits its parent's), else the guild's, else `requireMentionByDefault`. Direct
 * messages never need a mention.
 *
 * @param config - the resolved `channels.discord` section
 * @param origin - where the message came from
 */
export function requiresMention(config: DiscordConfig, origin: MessageOrigin): boolean {
  if (origin.guildId === undefined) return false;
  const [own, parent] = channelGates(config, origin);
  return (
    own?.requireMention ??
    parent?.requireMention ??
    config.guilds[origin.guildId]?.requireMention ??
    config.requireMentionByDefault
  );
}

type ChannelGate = NonNullable<DiscordGuildConfig['channels']>[string];

/** The channel's own gate and, for a thread, its parent's. */
function channelGates(
  config: DiscordConfig,
  origin: MessageOrigin,
): [ChannelGate | undefined, ChannelGate | undefined] {
  const channels = origin.guildId === undefined ? undefined : config.guilds[origin.guildId]?.channels;
  if (channels === undefined) return [undefined, undefined];
  return [channels[origin.channelId], origin.parentId === undefined ? undefined : channels[origin.parentId]];
}
