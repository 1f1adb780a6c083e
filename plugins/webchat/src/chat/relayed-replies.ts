import type { ChatMessage } from '../protocol/frames.js';

/**
 * What one instance relays to the web chat on the others, for one chat: reply chunks it sent
 * (`sent`), a message it edited (`edited`, the message as it is now) or deleted (`deleted`).
 */
export type RelayedReplies =
  | { chatId: string; change?: 'sent'; messages: ChatMessage[] }
  | { chatId: string; change: 'edited'; messages: [ChatMessage] }
  | { chatId: string; change: 'deleted'; ids: string[] };

/**
 * Reads a relayed payload, keeping only well-formed assistant messages (it crossed a process
 * boundary: nothing in it is trusted to have the right shape).
 *
 * @param payload - what `ChannelRelay.subscribe` handed over
 * @returns the replies, or `undefined` when the payload is not ours
 */
export function parseRelayedReplies(payload: unknown): RelayedReplies | undefined {
  if (typeof payload !== 'object' || payload === null) return undefined;
  const { chatId, messages, change, ids } = payload as {
    chatId?: unknown;
    messages?: unknown;
    change?: unknown;
    ids?: unknown;
  };
  if (typeof chatId !== 'string') return undefined;
  if (change === 'deleted') {
    const valid = Array.isArray(ids) ? ids.filter((id): id is string => typeof id === 'string') : [];
    return valid.length > 0 ? { chatId, change, ids: valid } : undefined;
  }
  if (!Array.isArray(messages)) return undefined;
  const valid = messages.filter(
    (m): m is ChatMessage =>
      typeof m === 'object' &&
      m !== null &&
      typeof (m as ChatMessage).id === 'string' &&
      (m as ChatMessage).role === 'assistant' &&
      typeof (m as ChatMessage).text === 'string' &&
      typeof (m as ChatMessage).at === 'number',
  );
  if (valid.length === 0) return undefined;
  if (change === 'edited') return { chatId, change, messages: [valid[0]!] };
  return { chatId, messages: valid };
}
