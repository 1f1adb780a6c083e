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
    expect(resolveWebChatOptions({ cookieSecret, config: { maxSockets: 10 } }).maxSocketsPerAddress).toBe(5);
    expect(() =>
      resolveWebChatOptions({ cookieSecret, config: { maxSockets: 10, maxSocketsPerAddress: 6 } }),
    ).toThrow(/channels\.webchat\.maxSocketsPerAddress: expected integer 1\.\.5/);
    expect(() =>
      resolveWebChatOptions({ cookieSecret, config: { trustedProxies: ['proxy.local'] } }),
    ).toThrow(/channels\.webchat\.trustedProxies\[0\]: expected an IP address/);
  });

  it('refuses a missing or short cookie secret and names the option without echoing it', () => {
    const attempt = () => resolveWebChatOptions({ cookieSecret: 'short' });
    expect(attempt).toThrow(
      expect.objectContaining({
        code: 'CONFIG_INVALID',
        details: { issues: [expect.objectContaining({ path: 'channels.webchat.cookieSecret' })] },
      }),
    );
    expect(attempt).not.toThrow(/short/);
  });

  it('refuses out-of-range numbers, naming each setting', () => {
    for (const [bad, path] of [
      [{ port: -1 }, 'port'],
      [{ port: 70000 }, 'port'],
      [{ maxMessageChars: 0 }, 'maxMessageChars'],
      [{ historyLimit: 501 }, 'historyLimit'],
      [{ assistantName: '  ' }, 'assistantName'],
    ] as const) {
      expect(() => resolveWebChatOptions({ cookieSecret, config: bad })).toThrow(`channels.webchat.${path}:`);
    }
  });

  it('trims the assistant name', () => {
    expect(resolveWebChatOptions({ cookieSecret, config: { assistantName: ' Ada ' } }).assistantName).toBe(
      'Ada',
    );
  });
});
