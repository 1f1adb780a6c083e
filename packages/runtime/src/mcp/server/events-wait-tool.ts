import { type AgentTool, type Gateway, toolResult } from '@colloquy/core';
import type { InboxEntry } from '@colloquy/core/store';
import { Type } from '@sinclair/typebox';

const DEFAULT_WAIT_SECONDS = 25;
/** Below the SDK clients' default request timeout (60 s), so a full wait never times the call out. */
const MAX_WAIT_SECONDS = 50;
/** The longest single `mcp.events` call: below the CLI's gateway request timeout (15 s), for stdio. */
const SLICE_MS = 10_000;

const EventsWaitParams = Type.Object(
  {
    timeoutSeconds: Type.Optional(
      Type.Number({
        description: `How long to wait for the first event, in seconds (default ${DEFAULT_WAIT_SECONDS}, at most ${MAX_WAIT_SECONDS}; 0 only looks).`,
      }),
    ),
    limit: Type.Optional(Type.Number({ description: 'Most events returned (default 20, at most 100).' })),
  },
  { additionalProperties: false },
);

/** One event as `events_wait` returns it. */
export interface McpEvent {
  /** Stable id (`announce:<child>:<runId>`, `watch:<id>`, ...). */
  id: string;
  /** `announce`: a sub-agent finished; `watch`: a watched session changed; `message`: anything else. */
  kind: 'announce' | 'watch' | 'message';
  /** Epoch ms the event was queued. */
  at: number;
  /** The event's text (the completion record, the change notice). */
  text: string;
}

/**
 * `events_wait`: a long poll on the MCP client's inbox. Sub-agents it spawned announce there, and
 * sessions it sent to with `watch: true` leave their notice there; each event is returned once.
 *
 * @param gateway - the gateway (`mcp.events`)
 * @param sessionKey - the client's session
 */
export function createEventsWaitTool(
  gateway: Gateway,
  sessionKey: string,
): AgentTool<typeof EventsWaitParams> {
  return {
    name: 'events_wait',
    description:
      'Wait for events addressed to you: sub-agents you spawned announce their result here, and sessions you sent to with watch: true report their next change. Returns { events, count } (events oldest first, each once), or count 0 when the wait ends first.',
    parameters: EventsWaitParams,
    async execute(_id, args) {
      const seconds = clamp(args.timeoutSeconds, DEFAULT_WAIT_SECONDS, 0, MAX_WAIT_SECONDS);
      const limit = clamp(args.limit, 20, 1, 100);
      try {
        const deadline = performance.now() + Math.round(seconds * 1000);
        let entries: InboxEntry[] = [];
        do {
          const timeoutMs = Math.max(0, Math.min(SLICE_MS, deadline - performance.now()));
          ({ entries } = await gateway.call('mcp.events', { sessionKey, timeoutMs, limit }));
        } while (entries.length === 0 && performance.now() < deadline);
        const events = entries.map(toMcpEvent);
        return toolResult({ events, count: events.length });
      } catch (error) {
        return toolResult(
          {
            status: 'error',
            error: `events_wait failed: ${error instanceof Error ? error.message : String(error)}`,
          },
          true,
        );
      }
    },
  };
}

function clamp(value: number | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined || !Number.isFinite(value)) return fallback;
  return Math.min(max, Math.max(min, Math.floor(value)));
}

/**
 * An inbox entry as the MCP client sees it.
 *
 * @param entry - an entry of the client's inbox
 */
export function toMcpEvent(entry: InboxEntry): McpEvent {
  const kind = entry.id.startsWith('announce:')
    ? 'announce'
    : entry.id.startsWith('watch:')
      ? 'watch'
      : 'message';
  const content = entry.message.content;
  const text =
    typeof content === 'string'
      ? content
      : content
          .map((block) => ('text' in block && typeof block.text === 'string' ? block.text : ''))
          .filter((part) => part !== '')
          .join('\n');
  return { id: entry.id, kind, at: entry.createdAt, text };
}
