/** The errors that reached the process without a handler while {@link collectUnhandledErrors} watched. */
export interface UnhandledErrors {
  /** Each uncaught exception and unhandled rejection, in order: each one would have crashed the process. */
  readonly errors: unknown[];
  /** Stops watching; such errors crash the process again. */
  stop(): void;
}

/**
 * Collects the uncaught exceptions (an `'error'` event nobody listens to, a throw in a callback) and
 * the unhandled promise rejections of this process, which would crash it, for fault tests that assert
 * a failure was handled: cut a connection, stop a server, then expect `errors` to be empty.
 *
 * @returns the errors collected so far, and `stop()`
 * @example
 * ```ts
 * const unhandled = collectUnhandledErrors();
 * await server.stopServer();
 * await cluster.stop();
 * expect(unhandled.errors).toEqual([]);
 * unhandled.stop();
 * ```
 */
export function collectUnhandledErrors(): UnhandledErrors {
  const errors: unknown[] = [];
  const collect = (error: unknown) => errors.push(error);
  process.on('uncaughtException', collect);
  process.on('unhandledRejection', collect);
  return {
    errors,
    stop() {
      process.off('uncaughtException', collect);
      process.off('unhandledRejection', collect);
    },
  };
}
