import { createHash } from 'node:crypto';
import type { InboundMessage } from '@colloquy/core';

/**
 * The run id of an inbound message, the same every time the platform delivers that message: a
 * UUID-shaped SHA-256 of its channel, account, chat, thread and message id. Storing the run is
 * then what acknowledges the message: a platform that delivers it again (a Telegram poller that
 * took over before the offset was confirmed, a webhook retry, a reconnect) meets the stored run and
 * nothing runs twice, across restarts and instances.
 *
 * @param inbound - the normalised message
 * @returns the run id
 */
export function inboundRunId(inbound: InboundMessage): string {
  const hex = createHash('sha256')
    .update(
      [inbound.channel, inbound.accountId, inbound.chat.id, inbound.threadId ?? '', inbound.messageId].join(
        '\u0000',
      ),
    )
    .digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
