import { ColloquyError, type DeliveryContext, type Logger, type OutboundMessage } from '@colloquy/core';
import { renderMessages, telegramHtml } from '@colloquy/markdown';
import type { Api } from 'grammy';
import { isEntityParseError, migratedChatId, toChannelError } from './telegram-errors.js';

/**
 * A Telegram chat id: numeric ids are sent as numbers, `@channelusername` as is.
 *
 * @param to - the delivery context's `to`
 */
export function toChatId(to: string): number | string {
  return /^-?[0-9]+$/.test(to) ? Number(to) : to;
}

/**
 * Converts, chunks and sends one outbound message; returns the Telegram id of every chunk.
 *
 * The first chunk quotes `replyToMessageId` (sent even if that message is gone); every chunk goes
 * to the topic in `to.threadId`. A chunk Telegram cannot parse is resent as plain text; a group
 * upgraded to a supergroup is followed once to its new id. Rate limits are retried by the
 * `autoRetry` transformer installed on `api`.
 *
 * @throws ColloquyError `INVALID_ARGUMENT` when there is no visible text; `CHANNEL_ERROR`,
 *   `RATE_LIMITED` or `FORBIDDEN` when Telegram refuses, with `details.sentMessageIds` of the
 *   chunks already delivered (never resend those)
 */
export async function sendText(
  api: Api,
  to: DeliveryContext,
  message: OutboundMessage,
  log: Logger,
): Promise<string[]> {
  const chunks = renderMessages(message.text, telegramHtml, { format: message.format ?? 'markdown' });
  if (chunks.length === 0) {
    throw new ColloquyError(
      'INVALID_ARGUMENT',
      'Nothing to send to Telegram: the message has no visible text.',
      {
        to: to.to,
      },
    );
  }
  let chatId = toChatId(to.to);
  const threadId = to.threadId !== undefined ? Number(to.threadId) : undefined;
  const sent: string[] = [];
  for (const [index, chunk] of chunks.entries()) {
    const replyTo = index === 0 && message.replyToMessageId ? Number(message.replyToMessageId) : undefined;
    const options = {
      ...(threadId !== undefined ? { message_thread_id: threadId } : {}),
      ...(replyTo !== undefined
        ? { reply_parameters: { message_id: replyTo, allow_sending_without_reply: true } }
        : {}),
    };
    try {
      const result = await sendChunk(api, chatId, chunk, options, log);
      sent.push(String(result.message_id));
    } catch (error) {
      const newChatId = migratedChatId(error);
      if (newChatId !== undefined && newChatId !== chatId) {
        log.warn(
          { from: chatId, to: newChatId },
          'telegram group was upgraded to a supergroup; following it',
        );
        chatId = newChatId;
        try {
          const result = await sendChunk(api, chatId, chunk, options, log);
          sent.push(String(result.message_id));
          continue;
        } catch (retryError) {
          throw withSent(retryError, to, sent, chunks.length);
        }
      }
      throw withSent(error, to, sent, chunks.length);
    }
  }
  return sent;
}

async function sendChunk(
  api: Api,
  chatId: number | string,
  chunk: string,
  options: Record<string, unknown>,
  log: Logger,
): Promise<{ message_id: number }> {
  try {
    return await api.sendMessage(chatId, chunk, { ...options, parse_mode: 'HTML' });
  } catch (error) {
    if (!isEntityParseError(error)) throw error;
    log.warn({ chatId }, 'telegram could not parse a chunk as HTML; sending it as plain text');
    return api.sendMessage(chatId, htmlToPlainText(chunk), options);
  }
}

function withSent(error: unknown, to: DeliveryContext, sent: string[], total: number): ColloquyError {
  return toChannelError(error, `send a message to chat ${to.to}`, {
    to: to.to,
    accountId: to.accountId,
    ...(to.threadId !== undefined ? { threadId: to.threadId } : {}),
    sentMessageIds: [...sent],
    chunks: total,
  });
}

/**
 * Drops tags and decodes the entities `escapeHtml` makes, for the plain-text fallback.
 *
 * @param html - Telegram HTML
 */
export function htmlToPlainText(html: string): string {
  return html
    .replace(/<[^>]*>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&');
}
