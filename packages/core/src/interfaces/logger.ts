/**
 * The logger Colloquy packages accept: a subset of pino's API, so a pino logger fits as is.
 */
export interface Logger {
  /** Logs at debug level: an object of fields and a message, or a message alone. */
  debug(obj: object | string, msg?: string): void;
  /** Logs at info level: an object of fields and a message, or a message alone. */
  info(obj: object | string, msg?: string): void;
  /** Logs at warn level: an object of fields and a message, or a message alone. */
  warn(obj: object | string, msg?: string): void;
  /** Logs at error level: an object of fields and a message, or a message alone. */
  error(obj: object | string, msg?: string): void;
  /** A logger that adds `bindings` to every entry. */
  child(bindings: Record<string, unknown>): Logger;
}

/** A logger that drops everything (the default when none is given). */
export const silentLogger: Logger = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
  child: () => silentLogger,
};
