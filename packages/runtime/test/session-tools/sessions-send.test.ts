import type { RunRecord } from '@colloquy/core/gateway';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../support/harness.js';
import { call, seed, startToolsHarness, type ToolsHarness } from './tools-fixture.js';

const A = 'agent:main:main';
const B = 'agent:main:memory:group:b';
const C = 'agent:main:memory:group:c';
const toB = { channel: 'memory', to: 'chat-b', accountId: 'default' };

let h: ToolsHarness;
afterEach(async () => {
  await h?.close();
});

async function announced(runId: string): Promise<NonNullable<RunRecord['announce']>> {
  await waitFor(
    async () => (await h.store.getRun(runId))?.announce !== undefined,
    5000,
    'announce outcome recorded',
  );
  return (await h.store.getRun(runId))!.announce!;
}

describe('sessions_send results', () => {
  it('returns accepted at once for timeoutSeconds 0, and the run still completes', async () => {
    h = await startToolsHarness({ tools: { sessions: { visibility: 'agent' } } });
    await seed(h.store, A);
    await seed(h.store, B);
    const result = await call<{ runId: string; status: string; sessionKey: string }>(
      h.tools(A).sessions_send,
      {
        sessionKey: B,
        message: 'hello',
        timeoutSeconds: 0,
      },
    );
    expect(result).toMatchObject({ status: 'accepted', sessionKey: B });
    const waited = await h.runtime.gateway.call('agent.wait', { runId: result.runId, timeoutMs: 5000 });
    expect(waited).toMatchObject({ status: 'done', reply: 'echo: hello' });
  });

  it('waits for the reply (ok) and marks the message as inter-session with agent-to-agent context', async () => {
    h = await startToolsHarness({ tools: { sessions: { visibility: 'agent' } } });
    await seed(h.store, A);
    await seed(h.store, B);
    const result = await call(h.tools(A).sessions_send, { sessionKey: B, message: 'what is 2+2?' });
    expect(result).toMatchObject({ status: 'ok', reply: 'echo: what is 2+2?', sessionKey: B });
    const injected = (await h.store.readTail(B, 10)).find((m) => m.role === 'user');
    expect(injected?.provenance).toMatchObject({
      kind: 'inter_session',
      sourceSessionKey: A,
      sourceTool: 'sessions_send',
      hop: 1,
    });
    const request = h.model.requests.find((r) =>
      r.messages.some((m) => m.role === 'user' && String(m.content).endsWith('what is 2+2?')),
    );
    expect(request?.system).toMatch(/another agent session \(main\).*not from your human user/s);
  });

  it('uses a 30 s wait by default', async () => {
    h = await startToolsHarness({ tools: { sessions: { visibility: 'agent' } } });
    await seed(h.store, A);
    await seed(h.store, B);
    const waits: number[] = [];
    const gateway = h.runtime.gateway;
    const tools = h.tools(A, {
      gateway: {
        call: (method, params) => {
          if (method === 'agent.wait') waits.push((params as { timeoutMs: number }).timeoutMs);
          return gateway.call(method, params);
        },
      },
    });
    await call(tools.sessions_send, { sessionKey: B, message: 'hi' });
    expect(waits).toContain(30_000);
  });

  it('reports a timeout, and the reply later appears in sessions_history', async () => {
    h = await startToolsHarness(
      { tools: { sessions: { visibility: 'agent' } } },
      { reply: (text) => ({ text: `slow: ${text}`, delayMs: 1500 }) },
    );
    await seed(h.store, A);
    await seed(h.store, B);
    const tools = h.tools(A);
    const result = await call<{ runId: string; status: string; error: string }>(tools.sessions_send, {
      sessionKey: B,
      message: 'take your time',
      timeoutSeconds: 1,
    });
    expect(result.status).toBe('timeout');
    expect(result.error).toMatch(/run continues.*sessions_history/);
    await h.runtime.gateway.call('agent.wait', { runId: result.runId, timeoutMs: 5000 });
    const history = await call<{ messages: { role: string; content: unknown }[] }>(tools.sessions_history, {
      sessionKey: B,
    });
    expect(JSON.stringify(history.messages)).toContain('slow: take your time');
  });

  it('reports an error when the target run fails', async () => {
    h = await startToolsHarness(
      { tools: { sessions: { visibility: 'agent' } } },
      { reply: () => ({ error: { code: 'MODEL_ERROR', message: 'the model fell over' } }) },
    );
    await seed(h.store, A);
    await seed(h.store, B);
    const result = await call<{ runId: string; status: string; error: string }>(h.tools(A).sessions_send, {
      sessionKey: B,
      message: 'hi',
    });
    expect(result.status).toBe('error');
    expect(result.runId).toBeTruthy();
    expect(result.error).toMatch(/fell over/);
  });

  it('resolves a target by label and agentId, and refuses both sessionKey and label', async () => {
    h = await startToolsHarness({ tools: { sessions: { visibility: 'agent' } } });
    await seed(h.store, A);
    await seed(h.store, B, { label: 'builders' });
    const tools = h.tools(A);
    expect(
      await call(tools.sessions_send, { label: 'builders', agentId: 'main', message: 'hey' }),
    ).toMatchObject({
      status: 'ok',
      sessionKey: B,
    });
    expect(await call(tools.sessions_send, { label: 'nobody', message: 'hey' })).toMatchObject({
      status: 'forbidden',
      error: expect.stringContaining('or it does not exist'),
    });
    expect(
      await call(tools.sessions_send, { sessionKey: B, label: 'builders', message: 'hey' }),
    ).toMatchObject({
      status: 'error',
      error: 'Pass either sessionKey or label, not both.',
    });
  });

  it('refuses targets whose send policy denies, and the caller’s own session', async () => {
    h = await startToolsHarness({
      tools: { sessions: { visibility: 'agent' } },
      session: { sendPolicy: { rules: [{ match: { keyPrefix: C }, action: 'deny' }] } },
    });
    await seed(h.store, A);
    await seed(h.store, B, { sendPolicy: 'deny' });
    await seed(h.store, C);
    const tools = h.tools(A);
    const denied = await call<{ status: string; error: string }>(tools.sessions_send, {
      sessionKey: B,
      message: 'x',
    });
    expect(denied.status).toBe('forbidden');
    expect(denied.error).toMatch(/send policy/);
    expect(
      (await call<{ status: string }>(tools.sessions_send, { sessionKey: C, message: 'x' })).status,
    ).toBe('forbidden');
    const self = await call<{ status: string }>(tools.sessions_send, { sessionKey: 'main', message: 'x' });
    expect(self.status).toBe('forbidden');
  });
});

describe('reply-back loop and announce step', () => {
  it('alternates requester and target for at most maxPingPongTurns turns', async () => {
    const turns: string[] = [];
    h = await startToolsHarness(
      { tools: { sessions: { visibility: 'agent' } }, session: { agentToAgent: { maxPingPongTurns: 3 } } },
      {
        replyBack: (text, turn) => {
          turns.push(text);
          return `turn ${turn}`;
        },
      },
    );
    await seed(h.store, A);
    await seed(h.store, B);
    const result = await call<{ runId: string }>(h.tools(A).sessions_send, {
      sessionKey: B,
      message: 'start',
    });
    expect((await announced(result.runId)).outcome).toBe('skipped');
    expect(turns).toEqual(['echo: start', 'turn 1', 'turn 2']);
    const aTranscript = JSON.stringify(await h.store.readTail(A, 50));
    const bTranscript = JSON.stringify(await h.store.readTail(B, 50));
    expect(aTranscript).toContain('echo: start');
    expect(bTranscript).toContain('turn 1');
    expect(aTranscript).toContain('turn 2');
  });

  it('stops the reply-back loop at REPLY_SKIP', async () => {
    let count = 0;
    h = await startToolsHarness(
      { tools: { sessions: { visibility: 'agent' } }, session: { agentToAgent: { maxPingPongTurns: 5 } } },
      {
        replyBack: (_text, turn) => {
          count++;
          return turn === 2 ? 'REPLY_SKIP' : `turn ${turn}`;
        },
      },
    );
    await seed(h.store, A);
    await seed(h.store, B);
    const result = await call<{ runId: string }>(h.tools(A).sessions_send, {
      sessionKey: B,
      message: 'start',
    });
    await announced(result.runId);
    expect(count).toBe(2);
  });

  it('runs no reply-back turn with maxPingPongTurns 0', async () => {
    let count = 0;
    h = await startToolsHarness(
      { tools: { sessions: { visibility: 'agent' } }, session: { agentToAgent: { maxPingPongTurns: 0 } } },
      {
        replyBack: () => {
          count++;
          return 'more';
        },
      },
    );
    await seed(h.store, A);
    await seed(h.store, B);
    const result = await call<{ runId: string }>(h.tools(A).sessions_send, {
      sessionKey: B,
      message: 'start',
    });
    await announced(result.runId);
    expect(count).toBe(0);
  });

  it('delivers the announcement to the target’s channel and records it', async () => {
    h = await startToolsHarness(
      { tools: { sessions: { visibility: 'agent' } }, session: { agentToAgent: { maxPingPongTurns: 0 } } },
      { announce: 'Team: main asked about the build; I answered.' },
    );
    await seed(h.store, A);
    await seed(h.store, B, { deliveryContext: toB, channel: 'memory', chatType: 'group' });
    const result = await call<{ runId: string }>(h.tools(A).sessions_send, {
      sessionKey: B,
      message: 'status?',
    });
    expect((await announced(result.runId)).outcome).toBe('delivered');
    expect(h.channel.textsTo('chat-b')).toEqual(['Team: main asked about the build; I answered.']);
  });

  it('stays silent on ANNOUNCE_SKIP and records it as skipped', async () => {
    h = await startToolsHarness(
      { tools: { sessions: { visibility: 'agent' } }, session: { agentToAgent: { maxPingPongTurns: 0 } } },
      { announce: 'ANNOUNCE_SKIP' },
    );
    await seed(h.store, A);
    await seed(h.store, B, { deliveryContext: toB, channel: 'memory', chatType: 'group' });
    const result = await call<{ runId: string }>(h.tools(A).sessions_send, {
      sessionKey: B,
      message: 'status?',
    });
    expect(await announced(result.runId)).toMatchObject({ outcome: 'skipped', reason: 'ANNOUNCE_SKIP' });
    expect(h.channel.sent).toEqual([]);
  });

  it('records a send-policy denial of the announcement instead of delivering it', async () => {
    h = await startToolsHarness(
      { tools: { sessions: { visibility: 'agent' } }, session: { agentToAgent: { maxPingPongTurns: 0 } } },
      { announce: 'Something to say', reply: (text) => ({ text: `slow ${text}`, delayMs: 300 }) },
    );
    await seed(h.store, A);
    await seed(h.store, B, { deliveryContext: toB, channel: 'memory', chatType: 'group' });
    const result = await call<{ runId: string; status: string }>(h.tools(A).sessions_send, {
      sessionKey: B,
      message: 'status?',
      timeoutSeconds: 0,
    });
    expect(result.status).toBe('accepted');
    await h.runtime.gateway.call('sessions.patch', { key: B, patch: { sendPolicy: 'deny' } });
    expect((await announced(result.runId)).outcome).toBe('denied');
    expect(h.channel.sent).toEqual([]);
  });
});

describe('hop limit', () => {
  it('cuts an A -> B -> C -> A cycle at session.agentToAgent.maxHops', async () => {
    const next: Record<string, string> = { 'start cycle': B, 'to B': C, 'to C': A };
    const label: Record<string, string> = { [B]: 'to B', [C]: 'to C', [A]: 'to A' };
    h = await startToolsHarness(
      {
        tools: { sessions: { visibility: 'agent' } },
        session: { agentToAgent: { maxPingPongTurns: 0, maxHops: 2 } },
      },
      {
        reply: (text, _system, lastRole) => {
          const target = next[text];
          if (lastRole === 'toolResult' || target === undefined) return 'done';
          return {
            toolCalls: [
              {
                name: 'sessions_send',
                arguments: { sessionKey: target, message: label[target], timeoutSeconds: 0 },
              },
            ],
          };
        },
      },
    );
    await seed(h.store, A);
    await seed(h.store, B);
    await seed(h.store, C);
    const { runId } = await h.runtime.gateway.call('agent', { sessionKey: A, message: 'start cycle' });
    await h.runtime.gateway.call('agent.wait', { runId, timeoutMs: 5000 });
    await waitFor(
      async () => (await h.store.readTail(C, 20)).some((m) => m.role === 'toolResult'),
      5000,
      'C tried to send on to A',
    );
    const cResult = (await h.store.readTail(C, 20)).find((m) => m.role === 'toolResult');
    expect(JSON.stringify(cResult?.content)).toMatch(/forbidden.*maxHops/);
    const bResult = (await h.store.readTail(B, 20)).find((m) => m.role === 'toolResult');
    expect(JSON.stringify(bResult?.content)).toContain('accepted');
    expect((await h.store.readTail(A, 50)).some((m) => m.content === 'to A')).toBe(false);
  });
});
