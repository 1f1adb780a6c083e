import type { ThreadBinding, ThreadBindingAccess } from '@colloquy/core';

/** Options of {@link createBindingKeeper}. */
export interface BindingKeeperOptions {
  /** The runtime's binding persistence (the Store). */
  access: ThreadBindingAccess;
  /** A binding idle this long is expired; 0 keeps bindings forever. */
  idleMs: number;
  /** The clock (epoch ms). Default `Date.now`. */
  now?: () => number;
}

/** Thread bindings with idle expiry on top of the runtime's persistence. */
export interface BindingKeeper {
  /** The live binding of a thread; an expired one is removed and reported as absent. */
  active(accountId: string, threadId: string): Promise<ThreadBinding | undefined>;
  /** Records activity on a binding (pushes its expiry back). */
  touch(binding: ThreadBinding): Promise<void>;
  /** Binds a thread to a session, replacing any earlier binding of that thread. */
  bind(input: {
    accountId: string;
    conversationId: string;
    threadId: string;
    sessionKey: string;
  }): Promise<ThreadBinding>;
  /** Removes every expired binding; returns how many were removed. */
  sweep(): Promise<number>;
  /** Whether a binding has been idle for longer than the configured time. */
  isExpired(binding: ThreadBinding): boolean;
}

/**
 * Wraps the runtime's {@link ThreadBindingAccess} with idle expiry. Expiry follows the configured
 * idle time from `lastActiveAt` (so changing `threadBindings.idleMinutes` applies to existing
 * bindings); `expiresAt` is kept up to date for display.
 *
 * @param options - persistence, idle time and clock
 * @returns the keeper
 */
export function createBindingKeeper(options: BindingKeeperOptions): BindingKeeper {
  const { access, idleMs } = options;
  const now = options.now ?? Date.now;
  const expiresAt = (lastActiveAt: number): number | undefined =>
    idleMs > 0 ? lastActiveAt + idleMs : undefined;
  const isExpired = (binding: ThreadBinding): boolean => idleMs > 0 && now() >= binding.lastActiveAt + idleMs;
  const save = (binding: ThreadBinding): Promise<void> => {
    const { channel: _channel, ...rest } = binding;
    return access.put(rest);
  };

  return {
    isExpired,
    async active(accountId, threadId) {
      const binding = await access.get(accountId, threadId);
      if (binding === undefined) return undefined;
      if (!isExpired(binding)) return binding;
      await access.remove(accountId, threadId);
      return undefined;
    },
    async touch(binding) {
      const at = now();
      // One write per second at most: a busy thread should not hammer the Store.
      if (at - binding.lastActiveAt < 1000) return;
      await save({ ...binding, lastActiveAt: at, expiresAt: expiresAt(at) });
    },
    async bind(input) {
      const at = now();
      const binding: ThreadBinding = {
        channel: 'discord',
        ...input,
        createdAt: at,
        lastActiveAt: at,
        expiresAt: expiresAt(at),
      };
      await save(binding);
      return binding;
    },
    async sweep() {
      let removed = 0;
      for (const binding of await access.list()) {
        if (!isExpired(binding)) continue;
        await access.remove(binding.accountId, binding.threadId);
        removed += 1;
      }
      return removed;
    },
  };
}
