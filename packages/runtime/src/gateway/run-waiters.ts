/** Waits for runs to end, by run id (backs `agent.wait`). */
export interface RunWaiters {
  /**
   * Resolves `true` when {@link RunWaiters.notify} is called for the run within `timeoutMs`,
   * else `false`. The caller checks the store before waiting (a run may already be over).
   */
  wait(runId: string, timeoutMs: number): Promise<boolean>;
  /** Wakes every waiter of the run. */
  notify(runId: string): void;
  /** Wakes every waiter with `false` (shutdown). */
  releaseAll(): void;
  /** How many waits are pending. */
  size(): number;
}

/**
 * Creates the waiter registry behind `agent.wait`.
 *
 * @returns the registry
 */
export function createRunWaiters(): RunWaiters {
  const waiting = new Map<string, Set<(ended: boolean) => void>>();
  let count = 0;
  return {
    wait(runId, timeoutMs) {
      return new Promise<boolean>((resolve) => {
        let set = waiting.get(runId);
        if (!set) {
          set = new Set();
          waiting.set(runId, set);
        }
        const entry = (ended: boolean) => {
          clearTimeout(timer);
          set!.delete(entry);
          count--;
          if (set!.size === 0 && waiting.get(runId) === set) waiting.delete(runId);
          resolve(ended);
        };
        const timer = setTimeout(() => entry(false), Math.max(0, timeoutMs));
        timer.unref?.();
        set.add(entry);
        count++;
      });
    },
    notify(runId) {
      const set = waiting.get(runId);
      if (!set) return;
      for (const entry of [...set]) entry(true);
    },
    releaseAll() {
      for (const set of [...waiting.values()]) for (const entry of [...set]) entry(false);
    },
    size: () => count,
  };
}
