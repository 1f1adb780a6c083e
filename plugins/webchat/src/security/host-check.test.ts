import { describe, expect, it } from 'vitest';
import { acceptedHosts, isAcceptedHost } from './host-check.js';

describe('host check', () => {
  it('accepts the bound address and the loopback names on any port, and refuses other names', () => {
    const accepted = acceptedHosts('127.0.0.1', undefined);
    for (const host of ['127.0.0.1:7420', 'localhost:7420', 'LOCALHOST', '[::1]:7420']) {
      expect(isAcceptedHost(host, accepted), host).toBe(true);
    }
    for (const host of ['evil.example:7420', 'evil.example', '127.0.0.1.evil.example', '', undefined]) {
      expect(isAcceptedHost(host, accepted), String(host)).toBe(false);
    }
  });

  it('accepts exactly the configured names when allowedHosts is set', () => {
    const accepted = acceptedHosts('0.0.0.0', ['chat.example.com']);
    expect(isAcceptedHost('chat.example.com', accepted)).toBe(true);
    expect(isAcceptedHost('Chat.Example.com:443', accepted)).toBe(true);
    expect(isAcceptedHost('localhost:7420', accepted)).toBe(false);
  });

  it('accepts any host when bound to every interface without a list', () => {
    expect(isAcceptedHost('anything.example', acceptedHosts('0.0.0.0', undefined))).toBe(true);
  });
});
