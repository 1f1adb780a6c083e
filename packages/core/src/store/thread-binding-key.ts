import type { ChannelCapabilities } from '../interfaces/channel-plugin.js';

/**
 * The key a thread binding is stored under (`ThreadBinding.threadId`; the Store keys bindings by
 * channel, account and this). A thread whose id is unique in its account (Discord) is keyed by its
 * id; a thread whose id repeats in every chat (`capabilities.threadScope: 'chat'`, Telegram forum
 * topics) by `<conversationId>:<threadId>`, so two forums that reuse a topic id keep their own
 * binding. Use it wherever a binding is written or looked up for a platform thread.
 *
 * @param scope - the channel's `capabilities.threadScope` (`undefined` means `account`)
 * @param conversationId - the chat that holds the thread
 * @param threadId - the platform thread or topic id
 * @returns the binding key
 * @example
 * ```ts
 * threadBindingKey('chat', '-1001234', '7'); // '-1001234:7'
 * threadBindingKey(undefined, '111', '222'); // '222'
 * ```
 */
export function threadBindingKey(
  scope: ChannelCapabilities['threadScope'],
  conversationId: string,
  threadId: string,
): string {
  return scope === 'chat' ? `${conversationId}:${threadId}` : threadId;
}
