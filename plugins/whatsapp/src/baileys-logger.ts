import type { Logger } from '@colloquy/core';
import type { WhatsAppSocketConfig } from './socket.js';

type BaileysLogger = NonNullable<WhatsAppSocketConfig['logger']>;

const asLogArg = (obj: unknown): object | string =>
  typeof obj === 'object' && obj !== null ? obj : String(obj);

/**
 * Adapts a Colloquy logger for Baileys. Baileys is chatty: its info lines go to debug and its
 * trace lines are dropped; warnings and errors pass through.
 */
export function toBaileysLogger(log: Logger): BaileysLogger {
  return {
    level: 'debug',
    child: (bindings) => toBaileysLogger(log.child(bindings)),
    trace: () => {},
    debug: (obj, msg) => log.debug(asLogArg(obj), msg),
    info: (obj, msg) => log.debug(asLogArg(obj), msg),
    warn: (obj, msg) => log.warn(asLogArg(obj), msg),
    error: (obj, msg) => log.error(asLogArg(obj), msg),
  };
}
