import type { ThreadBindingAccess } from '../interfaces/channel-plugin.js';
import type { StoreOperations } from '../interfaces/store.js';

/**
 * The thread bindings of one channel over a store: what `ChannelContext.threadBindings` is.
 *
 * @param store - the store
 * @param channel - the plugin id
 */
export function createThreadBindingAccess(store: StoreOperations, channel: string): ThreadBindingAccess {
  return {
    get: (accountId, threadId) => store.getThreadBinding(channel, accountId, threadId),
    put: (binding) => store.putThreadBinding({ ...binding, channel }),
    async touch(accountId, threadId, at) {
      const binding = await store.getThreadBinding(channel, accountId, threadId);
      if (binding) await store.putThreadBinding({ ...binding, lastActiveAt: at });
    },
    async remove(accountId, threadId) {
      await store.deleteThreadBinding(channel, accountId, threadId);
    },
    list: () => store.listThreadBindings({ channel }),
  };
}
