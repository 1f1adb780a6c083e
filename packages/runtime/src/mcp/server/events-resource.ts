import type { Gateway } from '@colloquy/core';
import type { McpServer, ScopeChallengeHandler } from '@modelcontextprotocol/server';
import { toMcpEvent } from './events-wait-tool.js';

/** The resource an MCP client reads its unread events from, and subscribes to for change notifications. */
export const MCP_EVENTS_URI = 'colloquy://events';

/**
 * Registers `colloquy://events`: the client's unread events (sub-agent announces, watch notices),
 * oldest first, as JSON `{ events, count }`. Reading leaves them unread; `events_wait` takes them.
 *
 * @param server - the client's server
 * @param gateway - the gateway (`mcp.pending`)
 * @param sessionKey - the client's session
 * @param open - opens the client's session before the first read
 * @param scopeChallenge - the HTTP-level check that the token has the `read` scope
 */
export function registerEventsResource(
  server: McpServer,
  gateway: Gateway,
  sessionKey: string,
  open: () => Promise<unknown>,
  scopeChallenge: ScopeChallengeHandler,
): void {
  server.registerResource(
    'events',
    MCP_EVENTS_URI,
    {
      title: 'Unread events',
      description:
        'Events addressed to this client that events_wait has not returned yet: sub-agent announces and watch notices, oldest first. Reading does not take them. Subscribe to be notified when one arrives.',
      mimeType: 'application/json',
      scopeChallenge,
    },
    async (uri) => {
      await open();
      const { entries, count } = await gateway.call('mcp.pending', { sessionKey, limit: 100 });
      const text = JSON.stringify({ events: entries.map(toMcpEvent), count });
      return { contents: [{ uri: uri.href, mimeType: 'application/json', text }] };
    },
  );
}
