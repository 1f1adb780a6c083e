import { describe, expect, it } from 'vitest';
import { exposedToolName, MCP_SERVER_NAME_PATTERN, serverReachable } from './mcp-tool-name.js';

describe('exposedToolName', () => {
  it('joins server and tool with a double underscore', () => {
    expect(exposedToolName('github', 'create_issue')).toBe('github__create_issue');
  });

  it('replaces characters model providers refuse', () => {
    expect(exposedToolName('fs', 'files.read/all')).toBe('fs__files_read_all');
  });

  it('gives up on names longer than 64 characters', () => {
    expect(exposedToolName('s', 'x'.repeat(61))).toBe(`s__${'x'.repeat(61)}`);
    expect(exposedToolName('s', 'x'.repeat(62))).toBeUndefined();
  });
});

describe('MCP_SERVER_NAME_PATTERN', () => {
  it('accepts single underscores and dashes but not a doubled underscore', () => {
    expect(MCP_SERVER_NAME_PATTERN.test('my_server-2')).toBe(true);
    expect(MCP_SERVER_NAME_PATTERN.test('my__server')).toBe(false);
    expect(MCP_SERVER_NAME_PATTERN.test('Upper')).toBe(false);
  });
});

describe('serverReachable', () => {
  it('starts only the servers a pattern can name', () => {
    expect(serverReachable('github', ['github__*'])).toBe(true);
    expect(serverReachable('gitlab', ['github__*'])).toBe(false);
    expect(serverReachable('fs', ['fs__read'])).toBe(true);
    expect(serverReachable('fs', ['fsx__read'])).toBe(false);
  });

  it('reaches every server from a pattern that starts with a star, and none from an empty list', () => {
    expect(serverReachable('fs', ['*__search'])).toBe(true);
    expect(serverReachable('fs', ['*'])).toBe(true);
    expect(serverReachable('fs', [])).toBe(false);
  });

  it('reaches a server whose name a pattern prefix leaves open', () => {
    expect(serverReachable('github', ['git*'])).toBe(true);
    expect(serverReachable('fs', ['git*'])).toBe(false);
  });
});
