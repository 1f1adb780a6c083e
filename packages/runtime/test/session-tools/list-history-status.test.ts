import type { Gateway, TranscriptMessage } from '@colloquy/core';
import { afterEach, describe, expect, it } from 'vitest';
import { call, seed, startToolsHarness, T0, type ToolsHarness } from './tools-fixture.js';

const MAIN = 'agent:main:main';
let h: ToolsHarness;
afterEach(async () => {
  await h?.close();
});

const user = (text: string, i = 0): TranscriptMessage => ({ role: 'user', content: text, timestamp: T0 + i });

describe('sessions_list clamps and defaults', () => {
  it('defaults and clamps limit at 200, floors fractional limits, and reports the count', async () => {
    h = await startToolsHarness({ tools: { sessions: { visibility: 'agent' } } });
    for (let i = 0; i < 230; i++)
      await seed(h.store, `agent:main:telegram:group:g${i}`, { updatedAt: T0 - i });
    const tools = h.tools(MAIN);
    const all = await call<{ count: number; sessions: { key: string }[] }>(tools.sessions_list, {});
    expect(all.count).toBe(200);
    expect(all.sessions).toHaveLength(200);
    expect((await call<{ count: number }>(tools.sessions_list, { limit: 1000 })).count).toBe(200);
    const two = await call<{ count: number; sessions: { key: string }[] }>(tools.sessions_list, {
      limit: 2.9,
    });
    expect(two.sessions.map((s) => s.key)).toEqual([
      'agent:main:telegram:group:g0',
      'agent:main:telegram:group:g1',
    ]);
    expect((await call<{ count: number }>(tools.sessions_list, { limit: Number.NaN })).count).toBe(200);
  });

  it('filters by activeMinutes (floored) and ignores unknown kinds case-insensitively', async () => {
    h = await startToolsHarness({ tools: { sessions: { visibility: 'agent' } } });
    const now = Date.now();
    await seed(h.store, MAIN, { updatedAt: now });
    await seed(h.store, 'agent:main:telegram:group:recent', { updatedAt: now - 90_000 });
    await seed(h.store, 'agent:main:telegram:group:old', { updatedAt: now - 10 * 60_000 });
    await seed(h.store, 'agent:main:telegram:dm:42', { updatedAt: now - 1000 });
    await seed(h.store, 'agent:main:subagent:s1', { updatedAt: now - 1000, spawnedBy: MAIN });
    const tools = h.tools(MAIN);
    const active = await call<{ sessions: { key: string }[] }>(tools.sessions_list, { activeMinutes: 2.7 });
    expect(active.sessions.map((s) => s.key)).not.toContain('agent:main:telegram:group:old');
    expect(active.sessions.map((s) => s.key)).toContain('agent:main:telegram:group:recent');
    const groups = await call<{ sessions: { key: string; kind: string }[] }>(tools.sessions_list, {
      kinds: ['GROUP', 'nonsense'],
    });
    expect(groups.sessions.map((s) => s.kind)).toEqual(['group', 'group']);
    const other = await call<{ count: number }>(tools.sessions_list, { kinds: ['other'] });
    expect(other.count).toBe(0);
    const onlyUnknown = await call<{ count: number }>(tools.sessions_list, { kinds: ['bogus'] });
    expect(onlyUnknown.count).toBe(5);
  });

  it('shows the main session as "main" with channel, child sessions and transcript locator', async () => {
    h = await startToolsHarness();
    await seed(h.store, MAIN, { lastChannel: 'telegram', updatedAt: T0 + 10 });
    await seed(h.store, 'agent:main:subagent:c1', { spawnedBy: MAIN, updatedAt: T0 + 5 });
    const result = await call<{ sessions: Record<string, unknown>[] }>(h.tools(MAIN).sessions_list, {});
    const main = result.sessions.find((s) => s.key === 'main');
    expect(main).toMatchObject({
      kind: 'main',
      channel: 'telegram',
      childSessions: ['agent:main:subagent:c1'],
    });
    expect(typeof main?.transcriptPath).toBe('string');
    expect(result.sessions.find((s) => s.key === 'agent:main:subagent:c1')?.kind).toBe('subagent');
  });

  it('lists every session even when one transcript holds a block it cannot read', async () => {
    h = await startToolsHarness({ tools: { sessions: { visibility: 'agent' } } });
    await seed(h.store, 'agent:main:telegram:group:broken', { updatedAt: T0 + 2 });
    await seed(h.store, 'agent:main:telegram:group:fine', { updatedAt: T0 + 1 });
    await h.store.appendMessages('agent:main:telegram:group:broken', [
      { role: 'assistant', timestamp: T0, content: [null, { type: 'text', text: 'still here' }] },
    ] as unknown as TranscriptMessage[]);
    await h.store.appendMessages('agent:main:telegram:group:fine', [user('hello', 1)]);
    const listed = await call<{ sessions: { key: string; messages?: { content: unknown }[] }[] }>(
      h.tools(MAIN).sessions_list,
      { messageLimit: 5 },
    );
    expect(listed.sessions.map((s) => s.messages?.map((m) => m.content))).toEqual([
      [[{ type: 'text', text: 'still here' }]],
      ['hello'],
    ]);
    const history = await call<{ droppedBlocks?: number }>(h.tools(MAIN).sessions_history, {
      sessionKey: 'agent:main:telegram:group:broken',
    });
    expect(history.droppedBlocks).toBe(1);
  });

  it('caps messageLimit at 20, removes tool results, and fetches at most 4 histories at once', async () => {
    h = await startToolsHarness({ tools: { sessions: { visibility: 'agent' } } });
    for (let s = 0; s < 9; s++) {
      const key = `agent:main:telegram:group:g${s}`;
      await seed(h.store, key);
      const messages: TranscriptMessage[] = [];
      for (let i = 0; i < 30; i++) {
        messages.push(
          i % 3 === 0
            ? {
                role: 'toolResult',
                content: `tool ${i}`,
                toolCallId: `c${i}`,
                toolName: 'x',
                timestamp: T0 + i,
              }
            : user(`m${i}`, i),
        );
      }
      await h.store.appendMessages(key, messages);
    }
    let inFlight = 0;
    let peak = 0;
    const gateway = h.runtime.gateway;
    const counting: Gateway = {
      call: async (method, params) => {
        if (method !== 'chat.history') return gateway.call(method, params);
        inFlight++;
        peak = Math.max(peak, inFlight);
        await new Promise((resolve) => setTimeout(resolve, 5));
        try {
          return await gateway.call(method, params);
        } finally {
          inFlight--;
        }
      },
    };
    const result = await call<{ sessions: { messages: { role: string }[] }[] }>(
      h.tools(MAIN, { gateway: counting }).sessions_list,
      { messageLimit: 50 },
    );
    expect(result.sessions).toHaveLength(9);
    for (const row of result.sessions) {
      expect(row.messages.length).toBeLessThanOrEqual(20);
      expect(row.messages.length).toBeGreaterThan(10);
      expect(row.messages.every((m) => m.role !== 'toolResult')).toBe(true);
    }
    expect(peak).toBe(4);
    const none = await call<{ sessions: Record<string, unknown>[] }>(h.tools(MAIN).sessions_list, {
      messageLimit: 0,
    });
    expect(none.sessions.every((s) => s.messages === undefined)).toBe(true);
  });
});

describe('sessions_history', () => {
  it('defaults to 50 messages, clamps at 500, and drops tool results unless includeTools', async () => {
    h = await startToolsHarness();
    await seed(h.store, MAIN);
    const messages: TranscriptMessage[] = [];
    for (let i = 0; i < 600; i++) messages.push(user(`m${i}`, i));
    messages.push({
      role: 'toolResult',
      content: 'tool output',
      toolCallId: 'c',
      toolName: 'x',
      timestamp: T0 + 700,
    });
    await h.store.appendMessages(MAIN, messages);
    const tools = h.tools(MAIN);
    const byDefault = await call<{ sessionKey: string; messages: { content: string }[] }>(
      tools.sessions_history,
      {
        sessionKey: 'main',
      },
    );
    expect(byDefault.sessionKey).toBe('main');
    expect(byDefault.messages).toHaveLength(49);
    expect(byDefault.messages.at(-1)?.content).toBe('m599');
    const withTools = await call<{ messages: { role: string }[] }>(tools.sessions_history, {
      sessionKey: 'main',
      includeTools: true,
    });
    expect(withTools.messages).toHaveLength(50);
    expect(withTools.messages.at(-1)?.role).toBe('toolResult');
    const big = await call<{ messages: unknown[] }>(tools.sessions_history, {
      sessionKey: 'main',
      limit: 10_000,
    });
    expect(big.messages.length).toBeLessThanOrEqual(500);
  });

  it('accepts any spelling of the key and the sessionId, and refuses unknown ones as it refuses hidden ones', async () => {
    h = await startToolsHarness();
    await seed(h.store, MAIN);
    const record = await seed(h.store, 'agent:main:subagent:c1', { spawnedBy: MAIN });
    await h.store.appendMessages(record.key, [user('child says hi')]);
    const tools = h.tools(MAIN);
    for (const spelling of ['  AGENT:Main:SubAgent:c1 ', record.sessionId, 'agent:main:subagent:c1']) {
      const result = await call<{ sessionKey: string; messages: { content: string }[] }>(
        tools.sessions_history,
        {
          sessionKey: spelling,
        },
      );
      expect(result.sessionKey).toBe('agent:main:subagent:c1');
      expect(result.messages.map((m) => m.content)).toEqual(['child says hi']);
    }
    const missing = await call<{ status: string; error: string }>(tools.sessions_history, {
      sessionKey: 'nope-123',
    });
    expect(missing.status).toBe('forbidden');
    expect(missing.error).toMatch(/not visible from this session, or it does not exist/);
    expect(missing.error).not.toContain('nope-123');
  });

  it('sanitises end to end: secrets redacted, long text cut, images omitted, 80 KiB cap keeps the newest', async () => {
    h = await startToolsHarness({ redaction: { secrets: ['hunter2-super-secret'] } });
    await seed(h.store, MAIN);
    await h.store.appendMessages(MAIN, [
      user('my password is hunter2-super-secret and key sk-proj-abcdefghijklmnopqrstuvwxyz0123456789'),
      user('x'.repeat(5000), 1),
      {
        role: 'assistant',
        content: [{ type: 'image', mimeType: 'image/png', data: 'A'.repeat(1000) }],
        timestamp: T0 + 2,
        usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
        cost: 0.1,
      },
    ]);
    const tools = h.tools(MAIN);
    const result = await call<{
      messages: { content: unknown; usage?: unknown; cost?: unknown }[];
      redacted: boolean;
      truncated: boolean;
      hardCapped: boolean;
      totalBytes: number;
    }>(tools.sessions_history, { sessionKey: 'main' });
    const text = JSON.stringify(result.messages);
    expect(text).not.toContain('hunter2-super-secret');
    expect(text).not.toContain('sk-proj-abcdefghijklmnopqrstuvwxyz0123456789');
    expect(result.redacted).toBe(true);
    expect(result.truncated).toBe(true);
    expect(result.messages[1]?.content).toBe(`${'x'.repeat(4000)}\n…(truncated)…`);
    expect(result.messages[2]?.content).toEqual([
      { type: 'image', mimeType: 'image/png', omitted: true, bytes: 1000 },
    ]);
    expect(result.messages[2]?.usage).toBeUndefined();
    expect(result.messages[2]?.cost).toBeUndefined();
    expect(result.hardCapped).toBe(false);

    const many: TranscriptMessage[] = [];
    for (let i = 0; i < 100; i++) many.push(user(`${i}:${'y'.repeat(3000)}`, 10 + i));
    await h.store.appendMessages(MAIN, many);
    const capped = await call<{ messages: { content: string }[]; hardCapped: boolean; totalBytes: number }>(
      tools.sessions_history,
      { sessionKey: 'main', limit: 100 },
    );
    expect(capped.hardCapped).toBe(true);
    expect(capped.totalBytes).toBeLessThanOrEqual(80 * 1024);
    expect(Buffer.byteLength(JSON.stringify(capped.messages))).toBeLessThanOrEqual(80 * 1024);
    expect(capped.messages.at(-1)?.content.startsWith('99:')).toBe(true);
    expect(capped.messages.length).toBeGreaterThan(1);
  });
});

describe('session_status and agents_list', () => {
  it('describes the caller’s own session by default', async () => {
    h = await startToolsHarness({ agents: { list: [{ id: 'main', default: true }, { id: 'ops' }] } });
    await seed(h.store, MAIN, {
      usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15, contextTokens: 10 },
      deliveryContext: { channel: 'telegram', to: '42', accountId: 'default' },
      lastChannel: 'telegram',
    });
    const status = await call<Record<string, unknown>>(h.tools(MAIN).session_status, {});
    expect(status).toMatchObject({
      sessionKey: 'main',
      agentId: 'main',
      model: 'scripted/test',
      usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15, contextTokens: 10 },
      status: 'idle',
      queueDepth: 0,
      channel: 'telegram',
      sendPolicy: 'allow',
    });
    expect(String(status.time)).toMatch(/[+-]\d{2}:\d{2}$/);
  });

  it('lists only the caller’s own agent unless allowAgents says more', async () => {
    h = await startToolsHarness({
      agents: {
        list: [
          { id: 'main', default: true, name: 'Main' },
          { id: 'ops', subagents: { allowAgents: ['*'] } },
          { id: 'sec' },
        ],
      },
    });
    expect(await call(h.tools(MAIN).agents_list, {})).toEqual([{ id: 'main', name: 'Main', default: true }]);
    expect(await call(h.tools('agent:ops:main').agents_list, {})).toEqual([
      { id: 'main', name: 'Main', default: true },
      { id: 'ops' },
      { id: 'sec' },
    ]);
  });
});
