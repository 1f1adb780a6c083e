import type { Logger } from '@colloquy/core';
import { Logger as GraphileLogger } from 'graphile-worker';

/**
 * graphile-worker's logger writing to a Colloquy logger: errors and warnings as such, the rest at
 * debug level, each line marked `component: 'graphile-worker'`.
 *
 * @param log - the instance's logger
 * @returns a logger for graphile-worker's `logger` option
 */
export function graphileLogger(log: Logger): GraphileLogger {
  return new GraphileLogger(() => (level, message, meta) => {
    const fields = { ...meta, component: 'graphile-worker' };
    if (level === 'error') log.error(fields, message);
    else if (level === 'warning') log.warn(fields, message);
    else log.debug(fields, message);
  });
}
