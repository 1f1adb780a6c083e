import type { InboundMessage } from '@colloquy/core';
import type { WAMessage } from '@whiskeysockets/baileys';
import type { MessageContent } from './message-content.js';

/** When a message was sent (epoch ms): WhatsApp stamps it in seconds, as a number or a Long. */
export function messageTimeMs(msg: WAMessage): number | undefined {
  const seconds = msg.messageTimestamp;
  if (typeof seconds === 'number') return seconds * 1000;
  if (seconds && typeof seconds.toNumber === 'function') return seconds.toNumber() * 1000;
  return undefined;
}

/** Builds the normalised inbound message the runtime receives. */
export function toInboundMessage(input: {
  msg: WAMessage;
  content: MessageContent;
  accountId: string;
  chat: InboundMessage['chat'];
  senderId: string;
  mentionsBot: boolean;
}): InboundMessage {
  const { msg, content } = input;
  const sender: InboundMessage['sender'] = { id: input.senderId };
  if (msg.pushName) sender.name = msg.pushName;
  const inbound: InboundMessage = {
    channel: 'whatsapp',
    accountId: input.accountId,
    chat: input.chat,
    sender,
    text: content.text,
    mentionsBot: input.mentionsBot,
    messageId: msg.key.id ?? '',
  };
  if (content.media.length > 0) inbound.media = content.media;
  if (content.quoted) inbound.replyToMessageId = content.quoted.id;
  const at = messageTimeMs(msg);
  if (at !== undefined) inbound.timestamp = at;
  return inbound;
}
