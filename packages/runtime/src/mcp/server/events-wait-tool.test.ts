import type { Gateway } from '@colloquy/core';
import type { GatewayMethod, GatewayParams } from '@colloquy/core/gateway';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createEventsWaitTool } from './events-wait-tool.js';

afterEach(() => {
  vi.useRealTimers();
});

/** A gateway whose `mcp.events` waits its whole timeout (on the mocked clock) and finds nothing, then `late`. */
function slowGateway(timeouts: number[], late?: { afterCalls: number }): Gateway {
  return {
    async call<M extends GatewayMethod>(method: M, params: GatewayParams<M>) {
      expect(method).toBe('mcp.events');
      const { timeoutMs = 0 } = params as GatewayParams<'mcp.events'>;
      timeouts.push(timeoutMs);
      vi.advanceTimersByTime(timeoutMs);
      const entries =
        late && timeouts.length >= late.afterCalls
          ? [
              {
                sessionKey: 'k',
                id: 'announce:c:r',
                message: { role: 'user' as const, content: 'done', timestamp: 1 },
                createdAt: 1,
              },
            ]
          : [];
      return { entries } as never;
    },
  };
}

describe('events_wait', () => {
  it('waits in slices of at most 10 s, so no gateway call outlives a client timeout', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'performance'] });
    const timeouts: number[] = [];
    const tool = createEventsWaitTool(slowGateway(timeouts), 'agent:main:mcp:x');
    const result = await tool.execute('1', { timeoutSeconds: 25 });
    expect(timeouts).toEqual([10_000, 10_000, 5_000]);
    expect(result.details).toEqual({ events: [], count: 0 });
  });

  it('clamps the wait to 50 s and stops at the first events', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'performance'] });
    const clamped: number[] = [];
    await createEventsWaitTool(slowGateway(clamped), 'k').execute('1', { timeoutSeconds: 999 });
    expect(clamped.reduce((a, b) => a + b, 0)).toBe(50_000);
    const early: number[] = [];
    const result = await createEventsWaitTool(slowGateway(early, { afterCalls: 2 }), 'k').execute('1', {});
    expect(early).toHaveLength(2);
    expect(result.details).toEqual({
      events: [{ id: 'announce:c:r', kind: 'announce', at: 1, text: 'done' }],
      count: 1,
    });
  });
});
