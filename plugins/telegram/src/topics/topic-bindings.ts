import type { Logger, ThreadBindingAccess } from '@colloquy/core';
import { threadBindingKey } from '@colloquy/core/internal';

/**
 * The key a forum topic's binding is stored under: topic ids repeat in every forum (each forum
 * numbers its own), so the chat is part of the key.
 *
 * @param chatId - the forum supergroup's chat id
 * @param topicId - the topic id (`message_thread_id`)
 * @returns `<chatId>:<topicId>`
 */
export function topicBindingKey(chatId: string, topicId: string): string {
  return threadBindingKey('chat', chatId, topicId);
}

/**
 * Moves bindings stored before they were keyed by chat (under the bare topic id) to
 * {@link topicBindingKey}. Idempotent: a binding already under its key is left alone, and a bare
 * one whose keyed copy exists (a move cut short) is only removed.
 *
 * @param access - the plugin's thread bindings
 * @param log - where the count of moved bindings goes
 * @returns how many bindings were moved
 */
export async function migrateTopicBindings(access: ThreadBindingAccess, log: Logger): Promise<number> {
  let moved = 0;
  for (const binding of await access.list()) {
    if (binding.threadId.startsWith(`${binding.conversationId}:`)) continue;
    const key = topicBindingKey(binding.conversationId, binding.threadId);
    if ((await access.get(binding.accountId, key)) === undefined) {
      const { channel: _channel, ...rest } = binding;
      await access.put({ ...rest, threadId: key });
      moved += 1;
    }
    await access.remove(binding.accountId, binding.threadId);
  }
  if (moved > 0) log.info({ moved }, 'telegram topic bindings now keyed by chat and topic');
  return moved;
}
