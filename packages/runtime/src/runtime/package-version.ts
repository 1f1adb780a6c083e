import { readFileSync } from 'node:fs';

/**
 * The version of `@colloquy/runtime` as published, read from its `package.json`: what the telemetry
 * scope and the MCP server report.
 */
export const RUNTIME_VERSION: string = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
