import { describe, expect, it } from 'vitest';
import { resolveWebChatOptions } from './options.js';

const cookieSecret = 'c'.repeat(32);

describe('web chat options', () => {
  it('applies the documented defaults', () => {
    expect(resolveWebChatOptions({ cookieSecret })).toMatchObject({
      host: '127.0.0.1',
      port: 7420,
      maxMessageChars: 8000,
      title: 'Colloquy',
      assistantName: 'Assistant',
      historyLimit: 50,
      accountId: 'default',
      adminToken: undefined,
      maxSockets: 2000,
      maxSocketsPerAddress: 32,
      newVisitorsPerMinute: 30,
      addressRateLimit: { burst: 30, perSecond: 3 },
      idleSocketMs: 300_000,
      trustedProxies: [],
    });
  });

  it('keeps one address to at most half of the socket cap, and trusts only IP addresses as proxies', () => {
    expect(resolveWebChatOptions({ cookieSecret, maxSockets: 10 }).maxSocketsPerAddress).toBe(5);
    expect(() => resolveWebChatOptions({ cookieSecret, maxSockets: 10, maxSocketsPerAddress: 6 })).toThrow(
      /maxSocketsPerAddress" must be an integer from 1 to 5/,
    );
    expect(() => resolveWebChatOptions({ cookieSecret, trustedProxies: ['proxy.local'] })).toThrow(
      /trustedProxies" must be a list of IP addresses/,
    );
  });

  it('refuses a missing or short cookie secret and names the option', () => {
    expect(() => resolveWebChatOptions({ cookieSecret: 'short' })).toThrow(
      expect.objectContaining({
        code: 'CONFIG_INVALID',
        details: { issues: [expect.objectContaining({ path: 'channels.webchat.cookieSecret' })] },
      }),
    );
  });

  it('refuses out-of-range numbers', () => {
    for (const bad of [{ port: -1 }, { port: 70000 }, { maxMessageChars: 0 }, { historyLimit: 501 }]) {
      expect(() => resolveWebChatOptions({ cookieSecret, ...bad })).toThrow(/must be/);
    }
  });
});
