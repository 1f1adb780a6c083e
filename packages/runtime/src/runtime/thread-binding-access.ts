import type { Store, ThreadBindingAccess } from '@colloquy/core';

/**
 * The thread bindings of one channel, backed by the store (what `ChannelContext.threadBindings` is).
 *
 * @param store - the store
 * @param channel - the plugin id
 * @returns the access object
 */
export function createThreadBindingAccess(store: Store, channel: string): ThreadBindingAccess {
  return {
    get: (accountId, threadId) => store.getThreadBinding(channel, accountId, threadId),
    put: (binding) => store.putThreadBinding({ ...binding, channel }),
    touch(accountId, threadId, at) {
      const binding = store.getThreadBinding(channel, accountId, threadId);
      if (binding) store.putThreadBinding({ ...binding, lastActiveAt: at });
    },
    remove: (accountId, threadId) => {
      store.deleteThreadBinding(channel, accountId, threadId);
    },
    list: () => store.listThreadBindings({ channel }),
  };
}
