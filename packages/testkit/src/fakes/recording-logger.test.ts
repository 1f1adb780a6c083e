import { describe, expect, it } from 'vitest';
import { createRecordingLogger } from './recording-logger.js';

describe('createRecordingLogger', () => {
  it('keeps entries of the logger and its children in one list, with the bindings', () => {
    const logger = createRecordingLogger();
    logger.info('plain');
    logger.child({ component: 'mcp' }).warn({ tool: 'read' }, 'timed out');
    expect(logger.entries).toEqual([
      { level: 'info', fields: {}, msg: 'plain' },
      { level: 'warn', fields: { component: 'mcp', tool: 'read' }, msg: 'timed out' },
    ]);
  });
});
