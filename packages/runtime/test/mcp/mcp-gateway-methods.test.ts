import { afterEach, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../support/harness.js';

let h: Harness | undefined;

afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('gateway methods behind the MCP server', () => {
  it('mcp.open creates the client session once, and no turn ever runs in it', async () => {
    h = await startHarness({ script: () => 'done' });
    const first = await h.runtime.gateway.call('mcp.open', { agentId: 'main', name: 'laptop' });
    const again = await h.runtime.gateway.call('mcp.open', { agentId: 'main', name: 'laptop' });
    expect(first).toMatchObject({
      created: true,
      session: { key: 'agent:main:mcp:laptop', agentId: 'main' },
    });
    expect(again).toMatchObject({ created: false, session: { sessionId: first.session.sessionId } });
    await expect(
      h.runtime.gateway.call('agent', { sessionKey: 'agent:main:mcp:laptop', message: 'hi' }),
    ).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(
      h.runtime.gateway.call('mcp.open', { agentId: 'main', name: 'Bad:Name' }),
    ).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
    await expect(h.runtime.gateway.call('mcp.open', { agentId: 'ghost', name: 'x' })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
  });

  it('mcp.events takes inbox entries once, into the transcript, and refuses other sessions', async () => {
    h = await startHarness({ script: () => 'done' });
    const { session } = await h.runtime.gateway.call('mcp.open', { agentId: 'main', name: 'laptop' });
    await h.store.putInbox({
      sessionKey: session.key,
      id: 'watch:w1',
      message: { role: 'user', content: 'main changed', timestamp: 1 },
      createdAt: 1,
    });
    // The runtime does not wake an MCP client session: the entry waits for the client.
    await h.runtime.wake(session.key);
    const { entries } = await h.runtime.gateway.call('mcp.events', { sessionKey: session.key, timeoutMs: 0 });
    expect(entries.map((e) => e.id)).toEqual(['watch:w1']);
    expect((await h.runtime.gateway.call('mcp.events', { sessionKey: session.key })).entries).toEqual([]);
    expect((await h.store.readTail(session.key, 5)).map((m) => m.content)).toEqual(['main changed']);
    await expect(
      h.runtime.gateway.call('mcp.events', { sessionKey: 'agent:main:main', timeoutMs: 0 }),
    ).rejects.toMatchObject({ code: 'FORBIDDEN' });
  });

  it('mcp.events waits for the first entry, up to its timeout', async () => {
    h = await startHarness({ script: () => 'done' });
    const { session } = await h.runtime.gateway.call('mcp.open', { agentId: 'main', name: 'laptop' });
    const started = Date.now();
    const waiting = h.runtime.gateway.call('mcp.events', { sessionKey: session.key, timeoutMs: 5000 });
    setTimeout(() => {
      void h!.store.putInbox({
        sessionKey: session.key,
        id: 'x1',
        message: { role: 'user', content: 'late', timestamp: 2 },
        createdAt: 2,
      });
    }, 200);
    expect((await waiting).entries.map((e) => e.id)).toEqual(['x1']);
    expect(Date.now() - started).toBeLessThan(4000);
    const empty = Date.now();
    expect(
      (await h.runtime.gateway.call('mcp.events', { sessionKey: session.key, timeoutMs: 300 })).entries,
    ).toEqual([]);
    expect(Date.now() - empty).toBeGreaterThanOrEqual(290);
  });

  it('mcp.pending shows unread entries without taking them, and waits for a newer one', async () => {
    h = await startHarness({ script: () => 'done' });
    const { session } = await h.runtime.gateway.call('mcp.open', { agentId: 'main', name: 'laptop' });
    const entry = (id: string, at: number) => ({
      sessionKey: session.key,
      id,
      message: { role: 'user' as const, content: id, timestamp: at },
      createdAt: at,
    });
    expect(await h.runtime.gateway.call('mcp.pending', { sessionKey: session.key })).toEqual({
      entries: [],
      count: 0,
    });
    await h.store.putInbox(entry('watch:a', 1));
    const seen = await h.runtime.gateway.call('mcp.pending', { sessionKey: session.key });
    expect(seen).toMatchObject({ count: 1, newestId: 'watch:a', entries: [{ id: 'watch:a' }] });
    expect((await h.runtime.gateway.call('mcp.pending', { sessionKey: session.key })).count).toBe(1);

    const waiting = h.runtime.gateway.call('mcp.pending', {
      sessionKey: session.key,
      waitForChange: true,
      newestId: 'watch:a',
      timeoutMs: 5000,
    });
    await h.store.putInbox(entry('watch:b', 2));
    expect(await waiting).toMatchObject({ count: 2, newestId: 'watch:b' });
    const unchanged = await h.runtime.gateway.call('mcp.pending', {
      sessionKey: session.key,
      waitForChange: true,
      newestId: 'watch:b',
      timeoutMs: 200,
    });
    expect(unchanged).toMatchObject({ count: 2, newestId: 'watch:b' });
    await h.runtime.gateway.call('mcp.events', { sessionKey: session.key });
    expect(
      await h.runtime.gateway.call('mcp.pending', {
        sessionKey: session.key,
        waitForChange: true,
        newestId: 'watch:b',
        timeoutMs: 5000,
      }),
    ).toEqual({ entries: [], count: 0 });
    await expect(
      h.runtime.gateway.call('mcp.pending', { sessionKey: 'agent:main:main' }),
    ).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(
      h.runtime.gateway.call('mcp.pending', { sessionKey: 'agent:main:mcp:nobody' }),
    ).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' });
  });

  it('agent keeps a W3C traceparent on the run and refuses a malformed one', async () => {
    h = await startHarness({ script: () => 'done' });
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const { runId } = await h.runtime.gateway.call('agent', {
      sessionKey: 'main',
      message: 'hi',
      traceparent,
      tracestate: 'vendor=1',
    });
    expect((await h.store.getRun(runId))?.meta).toMatchObject({ traceparent, tracestate: 'vendor=1' });
    for (const bad of ['00-abc-def-01', `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`]) {
      await expect(
        h.runtime.gateway.call('agent', { sessionKey: 'main', message: 'hi', traceparent: bad }),
      ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    }
  });
});
