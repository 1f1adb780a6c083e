import { ColloquyError, type OutboundMessage, type SendResult } from '@colloquy/core';
import { discord, renderMessages } from '@colloquy/markdown';
import {
  type APIAllowedMentions,
  type APIChannel,
  type APIMessage,
  DiscordAPIError,
  HTTPError,
  type REST,
  RESTJSONErrorCodes,
  type RESTPatchAPIChannelMessageJSONBody,
  type RESTPostAPIChannelMessageJSONBody,
  Routes,
} from 'discord.js';

/**
 * Mentions in model text render but never ping: a prompt-injected model must not be able to page
 * `@everyone` or a list of users. The author of the message replied to is still notified.
 */
const allowedMentions = (): APIAllowedMentions => ({ parse: [], replied_user: true });

/**
 * Sends a message to a channel in chunks of at most 2000 characters through the discord.js REST
 * queue (which waits out rate limits and retries 429s). Markdown (the default format) is first
 * rendered in Discord's dialect by `@colloquy/markdown`; `format: 'plain'` is sent as is. The first chunk replies to
 * `message.replyToMessageId` when set.
 *
 * @param rest - the account's REST client
 * @param channelId - the Discord channel (or thread) id
 * @param message - the outbound message
 * @returns the id of the first message and of every chunk
 * @throws ColloquyError `INVALID_ARGUMENT` when the text is blank; `CHANNEL_ERROR` when Discord
 *   refuses a chunk (`details.sentMessageIds` lists chunks already delivered)
 */
export async function sendChunks(
  rest: REST,
  channelId: string,
  message: OutboundMessage,
): Promise<SendResult> {
  const chunks = renderMessages(message.text, discord, { format: message.format ?? 'markdown' });
  if (chunks.length === 0) {
    throw new ColloquyError(
      'INVALID_ARGUMENT',
      'Cannot send a blank message to Discord: give it some text.',
      {
        channelId,
      },
    );
  }
  const messageIds: string[] = [];
  for (const [index, content] of chunks.entries()) {
    const body: RESTPostAPIChannelMessageJSONBody = { content, allowed_mentions: allowedMentions() };
    if (index === 0 && message.replyToMessageId !== undefined) {
      body.message_reference = { message_id: message.replyToMessageId, fail_if_not_exists: false };
    }
    try {
      const sent = (await rest.post(Routes.channelMessages(channelId), { body })) as APIMessage;
      messageIds.push(sent.id);
    } catch (error) {
      throw toChannelError(error, `send a message to channel ${channelId}`, {
        channelId,
        chunk: index,
        chunks: chunks.length,
        sentMessageIds: messageIds,
      });
    }
  }
  return { messageId: messageIds[0]!, messageIds };
}

/**
 * Replaces the content of a message the bot sent, rendered in Discord's dialect as `sendChunks`
 * does; mentions never ping. Goes through the discord.js REST queue (rate limits waited out).
 *
 * @param rest - the account's REST client
 * @param channelId - the channel (or thread) that holds the message
 * @param messageId - the message's snowflake
 * @param message - the new text; it must fit one message (2000 characters)
 * @throws ColloquyError `INVALID_ARGUMENT` when the text is blank or too long; `CHANNEL_ERROR` when
 *   Discord refuses (the message is gone, or not the bot's)
 */
export async function editContent(
  rest: REST,
  channelId: string,
  messageId: string,
  message: OutboundMessage,
): Promise<void> {
  const chunks = renderMessages(message.text, discord, { format: message.format ?? 'markdown' });
  if (chunks.length !== 1) {
    throw new ColloquyError(
      'INVALID_ARGUMENT',
      chunks.length === 0
        ? 'Cannot edit a Discord message to blank text: give it some text.'
        : 'An edited Discord message must fit one message (2000 characters); send a new one instead.',
      { channelId, messageId },
    );
  }
  const body: RESTPatchAPIChannelMessageJSONBody = {
    content: chunks[0]!,
    allowed_mentions: allowedMentions(),
  };
  try {
    await rest.patch(Routes.channelMessage(channelId, messageId), { body });
  } catch (error) {
    throw toChannelError(error, `edit message ${messageId} in channel ${channelId}`, {
      channelId,
      messageId,
    });
  }
}

/**
 * Deletes a message the bot sent; a message that is already gone counts as deleted.
 *
 * @param rest - the account's REST client
 * @param channelId - the channel (or thread) that holds the message
 * @param messageId - the message's snowflake
 * @throws ColloquyError `CHANNEL_ERROR` when Discord refuses
 */
export async function deleteSent(rest: REST, channelId: string, messageId: string): Promise<void> {
  try {
    await rest.delete(Routes.channelMessage(channelId, messageId));
  } catch (error) {
    if (error instanceof DiscordAPIError && error.code === RESTJSONErrorCodes.UnknownMessage) return;
    throw toChannelError(error, `delete message ${messageId} in channel ${channelId}`, {
      channelId,
      messageId,
    });
  }
}

/**
 * Opens (or finds) the DM channel with a user.
 *
 * @throws ColloquyError `CHANNEL_ERROR` when Discord refuses (the user shares no server with the bot
 *   or blocks DMs)
 */
export async function openDirectChannel(rest: REST, userId: string): Promise<string> {
  try {
    const channel = (await rest.post(Routes.userChannels(), {
      body: { recipient_id: userId },
    })) as APIChannel;
    return channel.id;
  } catch (error) {
    throw toChannelError(error, `open a DM with user ${userId}`, { userId });
  }
}

/** True for Discord's "Unknown Channel" error (the id is not a channel this bot can see). */
export function isUnknownChannel(error: unknown): boolean {
  const cause = error instanceof ColloquyError ? error.cause : error;
  return cause instanceof DiscordAPIError && cause.code === RESTJSONErrorCodes.UnknownChannel;
}

const HINTS: Partial<Record<number, string>> = {
  [RESTJSONErrorCodes.MissingAccess]:
    'Give the bot the View Channel permission there, or remove the binding.',
  [RESTJSONErrorCodes.MissingPermissions]:
    'Give the bot Send Messages (and Send Messages in Threads, Create Public Threads) in that channel.',
  [RESTJSONErrorCodes.UnknownChannel]: 'The channel is gone or the bot is not in its server.',
  [RESTJSONErrorCodes.CannotSendMessagesToThisUser]: 'The user does not accept DMs from this bot.',
  [RESTJSONErrorCodes.ThreadLocked]: 'The thread is locked; unlock it or start a new one.',
};

/** Discord is down or busy for now (5xx, 429): the send may succeed later. */
function isTransientStatus(status: number): boolean {
  return status >= 500 || status === 429;
}

/**
 * Wraps a discord.js error as `CHANNEL_ERROR` with Discord's status and JSON error code, and
 * `details.retryable` when Discord answered with a status (true for 5xx and 429, false for the
 * other refusals); a network failure keeps its cause (the runtime retries a reset or refused
 * connection).
 *
 * @param error - what discord.js threw
 * @param action - what was being done, e.g. "send a message to channel 123"
 * @param details - structured context
 */
export function toChannelError(
  error: unknown,
  action: string,
  details: Record<string, unknown>,
): ColloquyError {
  if (error instanceof DiscordAPIError) {
    const code = typeof error.code === 'number' ? error.code : undefined;
    const hint = code === undefined ? undefined : HINTS[code];
    return new ColloquyError(
      'CHANNEL_ERROR',
      `Discord refused to ${action}: ${error.message} (HTTP ${error.status}).${hint ? ` ${hint}` : ''}`,
      {
        ...details,
        status: error.status,
        discordCode: error.code,
        retryable: isTransientStatus(error.status),
      },
      { cause: error },
    );
  }
  if (error instanceof HTTPError) {
    return new ColloquyError(
      'CHANNEL_ERROR',
      `Discord could not ${action}: ${error.message} (HTTP ${error.status}).`,
      { ...details, status: error.status, retryable: isTransientStatus(error.status) },
      { cause: error },
    );
  }
  const message = error instanceof Error ? error.message : String(error);
  return new ColloquyError(
    'CHANNEL_ERROR',
    `Could not ${action}: ${message}. Check the network and the bot token.`,
    details,
    { cause: error },
  );
}
