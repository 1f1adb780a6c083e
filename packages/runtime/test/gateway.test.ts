import { isColloquyError } from '@colloquy/core';
import type { GatewayEvent } from '@colloquy/core/gateway';
import { makeRunRecord, makeSessionRecord } from '@colloquy/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { type Harness, STORE_KINDS, startHarness, waitFor } from './support/harness.js';

const MAIN = 'agent:main:main';
const GROUP = 'agent:main:memory:group:g1';

async function rejection(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (isColloquyError(error)) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('expected the call to reject');
}

describe.each(STORE_KINDS)('gateway methods (%s store)', (storeKind) => {
  let h: Harness;
  afterEach(async () => {
    await h?.close();
  });

  async function boot(script: Parameters<typeof startHarness>[0] = {}) {
    h = await startHarness({ storeKind, ...script });
    const now = Date.now();
    await h.store.putSession(
      makeSessionRecord(MAIN, { kind: 'main', updatedAt: now - 3000, createdAt: now - 3000 }),
    );
    await h.store.putSession(
      makeSessionRecord(GROUP, {
        kind: 'group',
        label: 'team',
        chatType: 'group',
        channel: 'memory',
        deliveryContext: { channel: 'memory', to: 'g1', accountId: 'default' },
        updatedAt: now - 1000,
        createdAt: now - 1000,
      }),
    );
    await h.store.putSession(
      makeSessionRecord('agent:ops:main', {
        agentId: 'ops',
        kind: 'main',
        label: 'team',
        updatedAt: now - 2000,
      }),
    );
    return h;
  }

  it('sessions.list filters by kind, sorts newest first, counts the total and gives locators', async () => {
    await boot();
    const all = await h.runtime.gateway.call('sessions.list', {});
    expect(all.sessions.map((s) => s.key)).toEqual([GROUP, 'agent:ops:main', MAIN]);
    const limited = await h.runtime.gateway.call('sessions.list', { kinds: ['main'], limit: 1 });
    expect(limited.sessions.map((s) => s.key)).toEqual(['agent:ops:main']);
    expect(limited.total).toBe(2);
    expect(limited.transcriptLocators?.['agent:ops:main']).toEqual(expect.any(String));
    const error = await rejection(h.runtime.gateway.call('sessions.list', { kinds: ['mian' as 'main'] }));
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.message).toContain('subagent');
  });

  it('sessions.list lists the children of several spawners at once, each with its latest run', async () => {
    await boot();
    const child = async (key: string, spawnedBy: string, updatedAt: number) => {
      await h.store.putSession(makeSessionRecord(key, { kind: 'subagent', spawnedBy, updatedAt }));
      await h.store.createRun(makeRunRecord(`${key}-run`, key, { createdAt: updatedAt, status: 'done' }));
    };
    await child('agent:main:subagent:a', MAIN, 3);
    await child('agent:main:subagent:b', GROUP, 2);
    await child('agent:main:subagent:c', 'agent:main:subagent:a', 1);
    const level = await h.runtime.gateway.call('sessions.list', {
      spawnedBy: [' Agent:Main:Main ', GROUP],
      withLatestRun: true,
    });
    expect(level.sessions.map((s) => s.key)).toEqual(['agent:main:subagent:a', 'agent:main:subagent:b']);
    expect(level.total).toBe(2);
    expect(Object.keys(level.latestRuns ?? {})).toEqual(['agent:main:subagent:a', 'agent:main:subagent:b']);
    expect(level.latestRuns?.['agent:main:subagent:b']?.runId).toBe('agent:main:subagent:b-run');
    expect((await h.runtime.gateway.call('sessions.list', { spawnedBy: [] })).sessions).toEqual([]);
    const wrong = await rejection(h.runtime.gateway.call('sessions.list', { spawnedBy: 7 as never }));
    expect(wrong).toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringContaining('a string or an array of strings'),
    });
  });

  it('sessions.resolve finds a key in any spelling, the main alias, a sessionId and a label', async () => {
    await boot();
    const call = (params: object) => h.runtime.gateway.call('sessions.resolve', params);
    expect((await call({ key: '  AGENT:Main:memory:group:g1 ' })).session.key).toBe(GROUP);
    expect((await call({ key: 'main' })).session.key).toBe(MAIN);
    expect((await call({ key: 'main', agentId: 'ops' })).session.key).toBe('agent:ops:main');
    expect((await call({ sessionId: `sid-${GROUP}` })).session.key).toBe(GROUP);
    expect((await call({ key: `sid-${GROUP}` })).session.key).toBe(GROUP);
    expect((await call({ label: 'team', agentId: 'main' })).session.key).toBe(GROUP);
    const missing = await rejection(call({ key: 'agent:main:nope' }));
    expect(missing).toMatchObject({
      code: 'SESSION_NOT_FOUND',
      message: expect.stringContaining('sessions.list'),
    });
    expect((await rejection(call({ label: 'team' }))).code).toBe('CONFLICT');
    expect((await rejection(call({ key: 'main', label: 'team' }))).code).toBe('INVALID_ARGUMENT');
  });

  it('sessions.patch validates each field and clears with null or inherit', async () => {
    await boot();
    const patch = (p: object) => h.runtime.gateway.call('sessions.patch', { key: 'main', patch: p as never });
    const events: GatewayEvent[] = [];
    h.runtime.gateway.subscribe((e) => events.push(e));
    const { session } = await patch({
      label: 'home',
      model: 'scripted/other',
      thinkingLevel: 'high',
      sendPolicy: 'deny',
    });
    expect(session).toMatchObject({
      label: 'home',
      model: 'scripted/other',
      thinkingLevel: 'high',
      sendPolicy: 'deny',
    });
    expect(events).toContainEqual({ type: 'session.updated', sessionKey: MAIN });
    expect((await patch({ sendPolicy: 'inherit', label: null })).session).not.toHaveProperty('sendPolicy');
    expect((await h.store.getSession(MAIN))?.label).toBeUndefined();
    expect((await rejection(patch({ thinkingLevel: 'extreme' }))).message).toContain('thinkingLevel');
    expect((await rejection(patch({ model: 'nowhere/model' }))).code).toBe('INVALID_ARGUMENT');
    expect((await rejection(patch({ label: 'team' }))).code).toBe('CONFLICT');
    expect((await rejection(patch({ kind: 'group' }))).message).toContain('cannot be patched');
    expect((await rejection(patch({}))).code).toBe('INVALID_ARGUMENT');
  });

  it('chat.history returns the tail with the total, and pages with beforeSeq', async () => {
    await boot();
    await h.store.appendMessages(
      GROUP,
      Array.from({ length: 7 }, (_, i) => ({ role: 'user' as const, content: `m${i}`, timestamp: i })),
    );
    const tail = await h.runtime.gateway.call('chat.history', { key: GROUP, limit: 3 });
    expect(tail.messages.map((m) => m.content)).toEqual(['m4', 'm5', 'm6']);
    expect(tail.total).toBe(7);
    const before = await h.runtime.gateway.call('chat.history', {
      key: GROUP,
      limit: 2,
      beforeSeq: tail.messages[0]!.seq,
    });
    expect(before.messages.map((m) => m.content)).toEqual(['m2', 'm3']);
    expect((await rejection(h.runtime.gateway.call('chat.history', { key: 'agent:main:x' }))).code).toBe(
      'SESSION_NOT_FOUND',
    );
  });

  it('chat.history and sessions.list page with offset; bad offsets are refused by name', async () => {
    await boot();
    await h.store.appendMessages(
      GROUP,
      Array.from({ length: 7 }, (_, i) => ({ role: 'user' as const, content: `m${i}`, timestamp: i })),
    );
    const page = await h.runtime.gateway.call('chat.history', { key: GROUP, limit: 2, offset: 3 });
    expect(page.messages.map((m) => m.content)).toEqual(['m2', 'm3']);
    expect(page.total).toBe(7);
    const listed = await h.runtime.gateway.call('sessions.list', { offset: 1, limit: 1 });
    expect(listed.sessions.map((s) => s.key)).toEqual(['agent:ops:main']);
    expect(listed.total).toBe(3);
    expect((await h.runtime.gateway.call('sessions.list', { offset: 2 })).sessions.map((s) => s.key)).toEqual(
      [MAIN],
    );
    const bad = await rejection(h.runtime.gateway.call('chat.history', { key: GROUP, offset: -1 }));
    expect(bad).toMatchObject({ code: 'INVALID_ARGUMENT', message: expect.stringContaining('"offset"') });
  });

  it('sessions.search finds words with filters, limit and offset, and refuses a query without words', async () => {
    await boot();
    await h.store.appendMessages(GROUP, [
      { role: 'user', content: 'the orchard keeps quiet', timestamp: 1 },
      { role: 'toolResult', content: 'orchard in a tool result', toolCallId: 't', timestamp: 2 },
    ]);
    await h.store.appendMessages('agent:ops:main', [
      { role: 'user', content: 'orchard at ops', timestamp: 3 },
    ]);
    const all = await h.runtime.gateway.call('sessions.search', { query: 'Orchard' });
    expect(all.total).toBe(2);
    expect(all.hits.map((hit) => hit.sessionKey).sort()).toEqual([GROUP, 'agent:ops:main'].sort());
    const scoped = await h.runtime.gateway.call('sessions.search', { query: 'orchard', agentIds: ['MAIN'] });
    expect(scoped.hits.map((hit) => [hit.sessionKey, hit.message.seq])).toEqual([[GROUP, 1]]);
    const second = await h.runtime.gateway.call('sessions.search', { query: 'orchard', limit: 1, offset: 1 });
    expect(second.hits).toHaveLength(1);
    expect(second.hits[0]?.sessionKey).not.toBe(all.hits[0]?.sessionKey);
    expect(
      (await h.runtime.gateway.call('sessions.search', { query: 'orchard', kinds: ['group'] })).total,
    ).toBe(1);
    const noWords = await rejection(h.runtime.gateway.call('sessions.search', { query: '***' }));
    expect(noWords).toMatchObject({ code: 'INVALID_ARGUMENT', message: expect.stringContaining('no words') });
    const badKind = await rejection(
      h.runtime.gateway.call('sessions.search', { query: 'x', kinds: ['nope' as never] }),
    );
    expect(badKind.message).toContain('unknown kind "nope"');
  });

  it('sessions.search finds messages written after sessions.delete removed the session with the newest ones', async () => {
    await boot();
    const say = (text: string) => ({ role: 'user' as const, content: text, timestamp: 1 });
    await h.store.appendMessages(MAIN, [say('first walrus')]);
    await h.store.appendMessages(GROUP, [say('group walrus'), say('group walrus again')]);
    expect((await h.runtime.gateway.call('sessions.search', { query: 'walrus' })).total).toBe(3);
    expect(await h.runtime.gateway.call('sessions.delete', { key: GROUP })).toEqual({ deleted: true });
    await h.store.appendMessages(MAIN, [say('narwhal one'), say('narwhal two')]);
    const found = await h.runtime.gateway.call('sessions.search', { query: 'narwhal' });
    expect(found.hits.map((hit) => [hit.sessionKey, hit.message.seq])).toEqual([
      [MAIN, 3],
      [MAIN, 2],
    ]);
  });

  it('sessions.search keeps a query word longer than any index holds: kiwi and a long word match nothing', async () => {
    await boot();
    await h.store.appendMessages(GROUP, [{ role: 'user', content: 'kiwi season', timestamp: 1 }]);
    expect((await h.runtime.gateway.call('sessions.search', { query: 'kiwi' })).total).toBe(1);
    const long = await h.runtime.gateway.call('sessions.search', { query: `kiwi ${'a'.repeat(3000)}` });
    expect(long).toEqual({ hits: [], total: 0 });
  });

  it('agent returns a run id at once; agent.wait also answers for runs that ended before the wait', async () => {
    await boot({ script: ['first', 'second'] });
    const { runId, status } = await h.runtime.gateway.call('agent', { sessionKey: 'main', message: 'hi' });
    expect(status).toBe('queued');
    await waitFor(async () => (await h.store.getRun(runId))?.status === 'done');
    const waited = await h.runtime.gateway.call('agent.wait', { runId, timeoutMs: 1000 });
    expect(waited).toMatchObject({ runId, status: 'done', waitTimedOut: false, reply: 'first' });
    expect(
      (await rejection(h.runtime.gateway.call('agent.wait', { runId: 'nope', timeoutMs: 10 }))).code,
    ).toBe('RUN_NOT_FOUND');
  });

  it('agent.wait reports waitTimedOut while the run is still going', async () => {
    await boot({ script: [{ text: 'late', delayMs: 400 }] });
    const { runId } = await h.runtime.gateway.call('agent', { sessionKey: 'main', message: 'hi' });
    const early = await h.runtime.gateway.call('agent.wait', { runId, timeoutMs: 20 });
    expect(early).toMatchObject({ waitTimedOut: true });
    expect(['queued', 'running']).toContain(early.status);
    const late = await h.runtime.gateway.call('agent.wait', { runId, timeoutMs: 3000 });
    expect(late).toMatchObject({ status: 'done', reply: 'late', waitTimedOut: false });
  });

  it('agent refuses unknown sessions, creates spawned ones, and honours idempotency keys', async () => {
    await boot({ script: () => 'ok' });
    const unknown = await rejection(
      h.runtime.gateway.call('agent', { sessionKey: 'agent:main:nope', message: 'x' }),
    );
    expect(unknown.code).toBe('SESSION_NOT_FOUND');
    const child = 'agent:main:subagent:abc';
    const spawned = await h.runtime.gateway.call('agent', {
      sessionKey: child,
      message: 'do the task',
      lane: 'subagent',
      spawnedBy: GROUP,
      session: { label: 'worker', model: 'scripted/child' },
      idempotencyKey: 'spawn-1',
    });
    const again = await h.runtime.gateway.call('agent', {
      sessionKey: child,
      message: 'do the task',
      idempotencyKey: 'spawn-1',
    });
    expect(again.runId).toBe(spawned.runId);
    expect(await h.store.getSession(child)).toMatchObject({
      kind: 'subagent',
      spawnedBy: GROUP,
      spawnDepth: 1,
      label: 'worker',
      model: 'scripted/child',
      requesterOrigin: { sessionKey: GROUP, channel: 'memory', to: 'g1', accountId: 'default' },
    });
    expect(await h.store.getRun(spawned.runId)).toMatchObject({
      lane: 'subagent',
      deliver: false,
      spawnedBy: GROUP,
    });
    const badModel = await rejection(
      h.runtime.gateway.call('agent', {
        sessionKey: 'agent:main:subagent:x',
        message: 'x',
        session: { model: 'no/such' },
      }),
    );
    expect(badModel.code).toBe('INVALID_ARGUMENT');
    expect(
      (
        await rejection(
          h.runtime.gateway.call('agent', { sessionKey: 'main', message: 'x', lane: 'fast' as 'main' }),
        )
      ).code,
    ).toBe('INVALID_ARGUMENT');
    await h.runtime.gateway.call('agent.wait', { runId: spawned.runId, timeoutMs: 3000 });
    expect(h.model.requests.some((r) => r.model === 'child')).toBe(true);
  });

  it('agent.abort kills a queued run before it reaches the model, and sessions.delete stops its runs', async () => {
    await boot({ script: [{ text: 'slow', delayMs: 10_000 }] });
    const first = await h.runtime.gateway.call('agent', {
      sessionKey: 'main',
      message: 'one',
      deliver: false,
    });
    const second = await h.runtime.gateway.call('agent', {
      sessionKey: 'main',
      message: 'two',
      extraSystemPrompt: 'not foldable with the first',
    });
    await h.model.waitForRequests(1);
    const status = await h.runtime.gateway.call('session.status', { key: 'main' });
    expect(status).toMatchObject({ status: 'running', queueDepth: 1, activeRunId: first.runId });
    const aborted = await h.runtime.gateway.call('agent.abort', { runId: second.runId });
    expect(aborted.aborted).toEqual([second.runId]);
    expect((await h.store.getRun(second.runId))?.status).toBe('killed');
    const deleted = await h.runtime.gateway.call('sessions.delete', { key: 'main' });
    expect(deleted).toEqual({ deleted: true });
    expect((await h.store.getRun(first.runId))?.status).toBe('killed');
    expect(await h.store.getSession(MAIN)).toBeUndefined();
    expect(h.model.callCount).toBe(1);
    expect(await h.runtime.gateway.call('sessions.delete', { key: 'main' })).toEqual({ deleted: false });
  });

  it('agents.list and agent.recordAnnounce', async () => {
    h = await startHarness({
      storeKind,
      config: {
        agents: {
          list: [
            { id: 'main', default: true, name: 'Main' },
            { id: 'ops', model: 'scripted/ops' },
          ],
        },
      },
      script: ['ok'],
    });
    const { agents } = await h.runtime.gateway.call('agents.list', {});
    expect(agents).toEqual([
      { id: 'main', name: 'Main', default: true, model: 'scripted/test' },
      { id: 'ops', model: 'scripted/ops' },
    ]);
    const { runId } = await h.runtime.gateway.call('agent', { sessionKey: 'main', message: 'hi' });
    await h.runtime.gateway.call('agent.wait', { runId, timeoutMs: 3000 });
    await h.runtime.gateway.call('agent.recordAnnounce', {
      runId,
      outcome: { outcome: 'denied', reason: 'policy', at: 5 },
    });
    expect((await h.store.getRun(runId))?.announce).toEqual({ outcome: 'denied', reason: 'policy', at: 5 });
  });

  it('publishes run events in order to subscribers', async () => {
    await boot({ script: [{ text: ['a', 'b'] }] });
    const events: GatewayEvent[] = [];
    h.runtime.gateway.subscribe((e) => events.push(e));
    const { runId } = await h.runtime.gateway.call('agent', { sessionKey: 'main', message: 'hi' });
    await h.runtime.gateway.call('agent.wait', { runId, timeoutMs: 3000 });
    const types = events.filter((e) => 'runId' in e && e.runId === runId).map((e) => e.type);
    expect(types).toEqual(['run.queued', 'run.started', 'run.delta', 'run.delta', 'run.ended']);
  });
});
