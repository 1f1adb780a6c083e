import type { Logger } from '@colloquy/core';
import { silentLogger } from '@colloquy/core';

/** Options of {@link installSignalHandlers}. */
export interface SignalHandlerOptions {
  /** Signals to handle. Default `SIGINT` and `SIGTERM`. */
  signals?: readonly NodeJS.Signals[];
  /** Called after shutdown with the exit code (0 ok, 1 failed or forced). Default `process.exit`. */
  exit?: (code: number) => void;
  /** Drain budget passed to `shutdown`. Default: `runtime.shutdownDrainMs` from the config. */
  drainMs?: number;
  /**
   * A repeat of the first signal within this many ms is ignored: one Ctrl-C reaches the process twice
   * when it runs under a package manager (the terminal signals the group, and `pnpm` forwards it too).
   * Default 500 ms.
   */
  repeatWindowMs?: number;
  /** Receives shutdown logs. Default: silent. */
  logger?: Logger;
}

/**
 * Routes SIGINT and SIGTERM to the one shutdown path: the first signal drains and shuts the runtime
 * down, then exits; a second signal exits at once with code 1 (a repeat within `repeatWindowMs` of
 * the first, the same Ctrl-C forwarded by a package manager, is ignored).
 *
 * @param runtime - anything with `shutdown({ drainMs })` (the runtime)
 * @param options - signals, exit function, drain budget, logger
 * @returns a function that removes the handlers
 * @example
 * ```ts
 * const runtime = createRuntime({ config, store, plugins });
 * await runtime.start();
 * installSignalHandlers(runtime);
 * ```
 */
export function installSignalHandlers(
  runtime: { shutdown(options?: { drainMs?: number }): Promise<void> },
  options: SignalHandlerOptions = {},
): () => void {
  const signals = options.signals ?? ['SIGINT', 'SIGTERM'];
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const log = options.logger ?? silentLogger;
  const repeatWindowMs = options.repeatWindowMs ?? 500;
  let stopping = false;
  let firstAt = 0;
  const handler = (signal: NodeJS.Signals) => {
    if (stopping && Date.now() - firstAt < repeatWindowMs) {
      log.debug({ signal }, 'the same signal again (forwarded by a parent process): ignored');
      return;
    }
    if (stopping) {
      log.warn({ signal }, 'second signal: exiting now');
      exit(1);
      return;
    }
    stopping = true;
    firstAt = Date.now();
    log.info({ signal }, 'shutting down');
    runtime.shutdown(options.drainMs === undefined ? {} : { drainMs: options.drainMs }).then(
      () => exit(0),
      (error: unknown) => {
        log.error({ err: error }, 'shutdown failed');
        exit(1);
      },
    );
  };
  for (const signal of signals) process.on(signal, handler);
  return () => {
    for (const signal of signals) process.off(signal, handler);
  };
}
