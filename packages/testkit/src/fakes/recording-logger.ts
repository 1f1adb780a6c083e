import type { Logger } from '@colloquy/core';

/** One entry a {@link RecordingLogger} kept. */
export interface LogEntry {
  /** `debug`, `info`, `warn` or `error`. */
  level: 'debug' | 'info' | 'warn' | 'error';
  /** The fields logged with the message (empty for a message alone), child bindings included. */
  fields: Record<string, unknown>;
  /** The message. */
  msg: string | undefined;
}

/** A `Logger` that keeps every entry, for assertions on what the owner would read. */
export interface RecordingLogger extends Logger {
  /** Every entry, oldest first (children write here too). */
  readonly entries: LogEntry[];
}

/**
 * Creates a logger that records instead of printing: pass it where a `Logger` goes (`createRuntime`,
 * `startBot`, a plugin) and assert on `entries`.
 *
 * @returns the logger
 * @example
 * ```ts
 * const logger = createRecordingLogger();
 * logger.child({ mcpServer: 'fs' }).warn({ tool: 'read' }, 'an MCP tool call timed out');
 * logger.entries; // [{ level: 'warn', fields: { mcpServer: 'fs', tool: 'read' }, msg: 'an MCP tool call timed out' }]
 * ```
 */
export function createRecordingLogger(): RecordingLogger {
  const entries: LogEntry[] = [];
  const make = (bindings: Record<string, unknown>): RecordingLogger => {
    const at =
      (level: LogEntry['level']) =>
      (obj: object | string, msg?: string): void => {
        entries.push(
          typeof obj === 'string'
            ? { level, fields: { ...bindings }, msg: obj }
            : { level, fields: { ...bindings, ...obj }, msg },
        );
      };
    return {
      entries,
      debug: at('debug'),
      info: at('info'),
      warn: at('warn'),
      error: at('error'),
      child: (more) => make({ ...bindings, ...more }),
    };
  };
  return make({});
}
