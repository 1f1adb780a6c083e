import type { Logger } from '@colloquy/core';
import { silentLogger } from '@colloquy/core';

/** Options of {@link installSignalHandlers}. */
export interface SignalHandlerOptions {
  /** Signals to handle. Default `SIGINT` and `SIGTERM`. */
  signals?: readonly NodeJS.Signals[];
  /**
   * Called after shutdown with the exit code: 0 after a signal (also when a second signal cut the
   * drain short), 1 after a `failure` or a shutdown that failed. Default `process.exit`.
   */
  exit?: (code: number) => void;
  /**
   * Aborted when the process can no longer do its job (a cluster instance that lost its control
   * connection): takes the same shutdown path as a signal, then exits 1, so a supervisor that
   * restarts only on failure restarts it. The abort reason is logged. Default: none.
   */
  failure?: AbortSignal;
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
 * Routes SIGINT, SIGTERM and a `failure` to the one shutdown path: the first of them drains and
 * shuts the runtime down, then exits with the code its cause calls for (0 for a signal, 1 for a
 * failure or a shutdown that failed). A second signal exits at once, with the same code: a user who
 * presses Ctrl-C twice asked to stop and gets a clean exit, since what the drain did not finish is
 * durable and resumes on the next start (a repeat within `repeatWindowMs` of the first, the same
 * Ctrl-C forwarded by a package manager, is ignored).
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
  const failure = options.failure;
  let stopping = false;
  let firstAt = 0;
  let stopCode: 0 | 1 = 0;
  /** Shuts down once; `code` is the exit code a clean shutdown ends with. */
  const shutDown = (code: 0 | 1) => {
    stopping = true;
    stopCode = code;
    runtime.shutdown(options.drainMs === undefined ? {} : { drainMs: options.drainMs }).then(
      () => exit(code),
      (error: unknown) => {
        log.error({ err: error }, 'shutdown failed');
        exit(1);
      },
    );
  };
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping && performance.now() - firstAt < repeatWindowMs) {
      log.debug({ signal }, 'the same signal again (forwarded by a parent process): ignored');
      return;
    }
    if (stopping) {
      log.warn({ signal }, 'second signal: exiting now; unfinished runs resume on the next start');
      exit(stopCode);
      return;
    }
    log.info({ signal }, 'shutting down');
    firstAt = performance.now();
    shutDown(0);
  };
  const onFailure = () => {
    if (stopping) {
      log.warn({ err: failure?.reason }, 'a failure while shutting down: the shutdown goes on');
      return;
    }
    log.error({ err: failure?.reason }, 'shutting down after a failure');
    shutDown(1);
  };
  for (const signal of signals) process.on(signal, onSignal);
  if (failure?.aborted) onFailure();
  else failure?.addEventListener('abort', onFailure, { once: true });
  return () => {
    for (const signal of signals) process.off(signal, onSignal);
    failure?.removeEventListener('abort', onFailure);
  };
}
