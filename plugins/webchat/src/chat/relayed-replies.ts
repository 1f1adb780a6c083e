import type { ChatMessage } from '../protocol/frames.js';

/** What one instance relays to the web chat on the others: the reply chunks sent to one chat. */
export interface RelayedReplies {
  chatId: string;
  messages: ChatMessage[];
}

/**
 * Reads a relayed payload, keeping only well-formed assistant messages (it crossed a process
 * boundary: nothing in it is trusted to have the right shape).
 *
 * @param payload - what `ChannelRelay.subscribe` handed over
 * @returns the replies, or `undefined` when the payload is not ours
 */
export function parseRelayedReplies(payload: unknown): RelayedReplies | undefined {
  if (typeof payload !== 'object' || payload === null) return undefined;
  const { chatId, messages } = payload as { chatId?: unknown; messages?: unknown };
  if (typeof chatId !== 'string' || !Array.isArray(messages)) return undefined;
  const valid = messages.filter(
    (m): m is ChatMessage =>
      typeof m === 'object' &&
      m !== null &&
      typeof (m as ChatMessage).id === 'string' &&
      (m as ChatMessage).role === 'assistant' &&
      typeof (m as ChatMessage).text === 'string' &&
      typeof (m as ChatMessage).at === 'number',
  );
  return valid.length > 0 ? { chatId, messages: valid } : undefined;
}
