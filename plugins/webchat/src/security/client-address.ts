import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';

/**
 * The address a request comes from, for the per-address limits. The TCP peer, unless that peer is
 * one of `trustedProxies`: then the right-most `X-Forwarded-For` entry that is not itself a trusted
 * proxy (the address the nearest trusted proxy saw). `X-Forwarded-For` is never read from an
 * untrusted peer, so a client cannot pick its own address; with no trusted proxies (the default)
 * the header is ignored.
 *
 * @param req - the HTTP request (or WebSocket upgrade)
 * @param trustedProxies - peer addresses whose `X-Forwarded-For` is believed
 * @returns a normalised IP address, or `unknown` when the peer is gone
 */
export function clientAddressOf(req: IncomingMessage, trustedProxies: ReadonlySet<string>): string {
  const peer = normalizeAddress(req.socket.remoteAddress ?? 'unknown');
  if (!trustedProxies.has(peer)) return peer;
  const header = req.headers['x-forwarded-for'];
  const hops = (Array.isArray(header) ? header.join(',') : (header ?? ''))
    .split(',')
    .map((hop) => normalizeAddress(hop.trim()))
    .filter((hop) => isIP(hop) !== 0);
  for (let i = hops.length - 1; i >= 0; i--) {
    if (!trustedProxies.has(hops[i]!)) return hops[i]!;
  }
  return peer;
}

/** Lower-cases an address and unwraps IPv4-mapped IPv6 (`::ffff:127.0.0.1` is `127.0.0.1`). */
export function normalizeAddress(address: string): string {
  const lower = address.toLowerCase();
  return lower.startsWith('::ffff:') && isIP(lower.slice(7)) === 4 ? lower.slice(7) : lower;
}
