import { describe, expect, it } from 'vitest';
import { resolveWebChatConfig } from './config.js';

describe('resolveWebChatConfig', () => {
  it('fills every default when the section is missing', () => {
    expect(resolveWebChatConfig(undefined)).toMatchObject({ enabled: true, host: '127.0.0.1', port: 7420 });
  });

  it('names the settings allowed next to an unknown one, and the one meant', () => {
    expect(() => resolveWebChatConfig({ prot: 1 })).toThrow(
      /channels\.webchat\.prot: unknown setting; allowed: enabled, host, port, .*; did you mean "port"\?/,
    );
  });
});
