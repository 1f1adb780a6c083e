import type { Logger } from '@colloquy/core';
import { Logger as GraphileLogger } from 'graphile-worker';

/**
 * graphile-worker's logger writing to a Colloquy logger: errors and warnings as such, the rest at
 * debug level, each line marked `component: 'graphile-worker'`.
 *
 * One warning is left out: that the pool is smaller than a runner's concurrency. A lane's runner has
 * as many workers as the lane runs turns (256 by default), and a worker holds its job for the whole
 * turn, but a connection only while it takes or settles a job: the turn itself writes through the
 * store's own pool. So a pool of 10 serves hundreds of workers, and the warning, given at every start
 * with the default settings, would only alarm.
 *
 * @param log - the instance's logger
 * @returns a logger for graphile-worker's `logger` option
 */
export function graphileLogger(log: Logger): GraphileLogger {
  return new GraphileLogger(() => (level, message, meta) => {
    if (level === 'warning' && isPoolSizeWarning(meta)) return;
    const fields = { ...meta, component: 'graphile-worker' };
    if (level === 'error') log.error(fields, message);
    else if (level === 'warning') log.warn(fields, message);
    else log.debug(fields, message);
  });
}

/** graphile-worker's "maxPoolSize smaller than concurrency" warning, told by its fields. */
function isPoolSizeWarning(meta: Record<string, unknown> | undefined): boolean {
  return typeof meta?.max === 'number' && typeof meta.concurrency === 'number';
}
