import type { Logger } from '@colloquy/core';
import { describe, expect, it } from 'vitest';
import { graphileLogger } from './graphile-logger.js';

function recordingLogger(): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  const log: Logger = {
    debug: (_fields, message) => lines.push(`debug ${message}`),
    info: (_fields, message) => lines.push(`info ${message}`),
    warn: (_fields, message) => lines.push(`warn ${message}`),
    error: (_fields, message) => lines.push(`error ${message}`),
    child: () => log,
  };
  return { log, lines };
}

describe('graphileLogger', () => {
  it('passes warnings and errors on, and leaves out the pool-size warning our workers do not need', () => {
    const { log, lines } = recordingLogger();
    const logger = graphileLogger(log);
    logger.warn(
      'WARNING: having maxPoolSize (10) smaller than concurrency (256) may lead to non-optimal performance.',
      {
        max: 10,
        concurrency: 256,
      },
    );
    logger.warn('Failed to release job', { jobId: '1' });
    logger.error('Worker failed');
    logger.info('Worker connected');
    expect(lines).toEqual(['warn Failed to release job', 'error Worker failed', 'debug Worker connected']);
  });
});
