import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { clientAddressOf } from './client-address.js';

const request = (peer: string, forwarded?: string): IncomingMessage =>
  ({
    socket: { remoteAddress: peer },
    headers: forwarded === undefined ? {} : { 'x-forwarded-for': forwarded },
  }) as unknown as IncomingMessage;

describe('clientAddressOf', () => {
  const trusted = new Set(['10.0.0.1', '127.0.0.1']);

  it('is the TCP peer, unwrapping IPv4-mapped IPv6, when the peer is not a trusted proxy', () => {
    expect(clientAddressOf(request('::ffff:192.0.2.5', '198.51.100.1'), trusted)).toBe('192.0.2.5');
    expect(clientAddressOf(request('192.0.2.5', '198.51.100.1'), new Set())).toBe('192.0.2.5');
  });

  it('behind trusted proxies, is the right-most X-Forwarded-For entry that is not one of them', () => {
    expect(clientAddressOf(request('::ffff:127.0.0.1', '203.0.113.9'), trusted)).toBe('203.0.113.9');
    // A client-supplied left part cannot choose the address.
    expect(clientAddressOf(request('127.0.0.1', '1.2.3.4, 203.0.113.9, 10.0.0.1'), trusted)).toBe(
      '203.0.113.9',
    );
    expect(clientAddressOf(request('127.0.0.1', 'not-an-ip'), trusted)).toBe('127.0.0.1');
    expect(clientAddressOf(request('127.0.0.1'), trusted)).toBe('127.0.0.1');
  });
});
