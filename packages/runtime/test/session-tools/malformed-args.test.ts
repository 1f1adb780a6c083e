import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seed, startToolsHarness, type ToolsHarness } from './tools-fixture.js';

const MAIN = 'agent:main:main';
const HUGE = 'x'.repeat(1_000_000);

const CASES: Record<string, unknown[]> = {
  sessions_list: [
    { limit: 'ten' },
    { kinds: 'group' },
    { kinds: [1, 2] },
    { messageLimit: -1 },
    { activeMinutes: 0 },
    { limit: 0 },
    { unknownKey: true },
    { kinds: [HUGE] },
    'not an object',
    [1, 2, 3],
  ],
  sessions_history: [
    {},
    { sessionKey: 42 },
    { sessionKey: '' },
    { sessionKey: HUGE },
    { sessionKey: 'main', limit: 'all' },
    { sessionKey: 'main', includeTools: 'yes' },
    { sessionKey: 'main', extra: 1 },
    null,
    17,
  ],
  sessions_send: [
    {},
    { sessionKey: 'main' },
    { message: 'hi' },
    { sessionKey: 'agent:main:x', message: '' },
    { sessionKey: 'agent:main:x', message: '   ' },
    { sessionKey: 'agent:main:x', message: HUGE },
    { sessionKey: 'agent:main:x', message: 'hi', timeoutSeconds: -5 },
    { sessionKey: 'agent:main:x', message: 'hi', timeoutSeconds: 'soon' },
    { sessionKey: 'agent:main:x', message: 'hi', bcc: 'everyone' },
    { sessionKey: 'agent:main:x', agentId: 'ops', message: 'hi' },
    { sessionKey: { nested: true }, message: 'hi' },
  ],
  session_status: [{ sessionKey: 7 }, { sessionKey: '' }, { sessionKey: HUGE }, { verbose: true }],
  agents_list: [{ anything: 1 }, 'x'],
};

describe('session tools given malformed arguments', () => {
  let h: ToolsHarness;
  beforeAll(async () => {
    h = await startToolsHarness({ tools: { sessions: { visibility: 'agent' } } });
    await seed(h.store, MAIN);
    await seed(h.store, 'agent:main:x');
  });
  afterAll(async () => {
    await h.close();
  });

  for (const [toolName, cases] of Object.entries(CASES)) {
    it.each(cases.map((args, i) => [i, args]))(
      `${toolName} answers case %i with a status:error sentence and never throws`,
      async (_i, args) => {
        const tool = h.tools(MAIN)[toolName]!;
        const result = await tool.execute('call-bad', args as never);
        const details = result.details as { status: string; error: string };
        expect(details.status).toBe('error');
        expect(details.error).toMatch(/^[A-Z].*[.!]$/s);
        expect(details.error.length).toBeLessThan(1000);
        expect(JSON.parse(result.content[0].text)).toEqual(details);
      },
    );
  }

  it('answers a truly unknown session with a forbidden value, not a throw', async () => {
    const tools = h.tools(MAIN);
    for (const name of ['sessions_history', 'session_status'] as const) {
      const result = await tools[name]!.execute('c', { sessionKey: 'agent:main:does-not-exist' } as never);
      expect((result.details as { status: string }).status).toBe('forbidden');
    }
  });
});
