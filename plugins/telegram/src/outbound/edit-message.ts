import { ColloquyError, type DeliveryContext, type OutboundMessage } from '@colloquy/core';
import { renderMessages, telegramHtml } from '@colloquy/markdown';
import { type Api, GrammyError } from 'grammy';
import { htmlToPlainText, toChatId } from './send-text.js';
import { isEntityParseError, toChannelError } from './telegram-errors.js';

/**
 * Replaces the text of a message the bot sent, converted to Telegram HTML as `sendText` does (plain
 * text when Telegram cannot parse it). Editing to the text the message already shows succeeds.
 *
 * @param api - the account's Bot API client
 * @param to - the chat the message is in
 * @param messageId - the Telegram message id
 * @param message - the new text; it must fit one message
 * @throws ColloquyError `INVALID_ARGUMENT` when the text is blank or longer than one message;
 *   `CHANNEL_ERROR` (or `RATE_LIMITED`, `FORBIDDEN`) when Telegram refuses, e.g. the message is gone
 */
export async function editText(
  api: Api,
  to: DeliveryContext,
  messageId: string,
  message: OutboundMessage,
): Promise<void> {
  const chunks = renderMessages(message.text, telegramHtml, { format: message.format ?? 'markdown' });
  if (chunks.length !== 1) {
    throw new ColloquyError(
      'INVALID_ARGUMENT',
      chunks.length === 0
        ? 'Cannot edit a Telegram message to blank text: give it some text.'
        : 'An edited Telegram message must fit one message (4096 characters); send a new one instead.',
      { to: to.to, messageId },
    );
  }
  const chatId = toChatId(to.to);
  const html = chunks[0] as string;
  try {
    try {
      await api.editMessageText(chatId, Number(messageId), html, { parse_mode: 'HTML' });
    } catch (error) {
      if (!isEntityParseError(error)) throw error;
      await api.editMessageText(chatId, Number(messageId), htmlToPlainText(html));
    }
  } catch (error) {
    if (isNotModified(error)) return;
    throw toChannelError(error, `edit message ${messageId} in chat ${to.to}`, { to: to.to, messageId });
  }
}

/**
 * Deletes a message the bot sent; a message that is already gone counts as deleted.
 *
 * @param api - the account's Bot API client
 * @param to - the chat the message is in
 * @param messageId - the Telegram message id
 * @throws ColloquyError `CHANNEL_ERROR` (or `RATE_LIMITED`, `FORBIDDEN`) when Telegram refuses
 */
export async function deleteSent(api: Api, to: DeliveryContext, messageId: string): Promise<void> {
  try {
    await api.deleteMessage(toChatId(to.to), Number(messageId));
  } catch (error) {
    if (error instanceof GrammyError && /message to delete not found/i.test(error.description)) return;
    throw toChannelError(error, `delete message ${messageId} in chat ${to.to}`, { to: to.to, messageId });
  }
}

/** Telegram's 400 for an edit that changes nothing. */
function isNotModified(error: unknown): boolean {
  return error instanceof GrammyError && /message is not modified/i.test(error.description);
}
