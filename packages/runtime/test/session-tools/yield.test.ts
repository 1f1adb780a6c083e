import type { ModelRequest } from '@colloquy/core/model';
import { afterEach, describe, expect, it } from 'vitest';
import {
  call,
  isSubagent,
  MAIN,
  quiesce,
  type SubagentHarness,
  seedMain,
  startSubagentHarness,
  userTexts,
} from '../subagents/subagents-fixture.js';
import { makeStore, STORE_KINDS, waitFor } from '../support/harness.js';

let h: SubagentHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** The last message of a request, as the model reads it. */
const last = (request: ModelRequest) => request.messages.at(-1);
const wakeNotices = (request: ModelRequest) => userTexts(request).filter((t) => t.includes('You yielded'));
const announcesSeen = (request: ModelRequest) =>
  userTexts(request).filter((t) => t.includes('Sub-agent')).length;
/** A child waits the ms its task names (`name:ms`). */
const childStep = (request: ModelRequest) => {
  const task = userTexts(request)[0]?.split('\n').at(-1) ?? '';
  return { text: `result of ${task}`, delayMs: Number(task.split(':')[1] ?? 0) };
};

describe.each(STORE_KINDS)('sessions_yield through the runtime (%s store)', (storeKind) => {
  it('ends the turn at once, wakes once per arriving result with the reason, and never busy-loops', async () => {
    const afterYield: ModelRequest[] = [];
    // Each child finishes when the test says so: one result arrives per wake, however busy the machine.
    const finish = new Map<string, () => void>();
    const gatedChild = (request: ModelRequest) => {
      const task = userTexts(request)[0]?.split('\n').at(-1) ?? '';
      return new Promise<string>((resolve) => finish.set(task, () => resolve(`result of ${task}`)));
    };
    h = await startSubagentHarness({
      storeKind,
      script: (request) => {
        if (isSubagent(request)) return gatedChild(request);
        const tail = last(request);
        if (tail?.role === 'toolResult' && tail.toolName === 'sessions_yield') afterYield.push(request);
        if (tail?.role === 'toolResult' && tail.toolName === 'sessions_spawn') {
          return {
            text: '',
            toolCalls: [{ name: 'sessions_yield', arguments: { reason: 'three results' } }],
          };
        }
        if (announcesSeen(request) === 0) {
          return {
            toolCalls: ['alpha', 'beta', 'gamma'].map((task) => ({
              name: 'sessions_spawn',
              arguments: { task },
            })),
          };
        }
        if (announcesSeen(request) < 3) {
          return { toolCalls: [{ name: 'sessions_yield', arguments: { reason: 'the rest' } }] };
        }
        return 'all three are in';
      },
    });
    await seedMain(h.store);
    await h.runtime.gateway.call('agent', { sessionKey: MAIN, message: 'Research three things' });
    const parentCalls = () => h!.model.requests.filter((r) => !isSubagent(r)).length;
    await waitFor(
      () => finish.size === 3 && parentCalls() === 2,
      8000,
      'three children running, the parent yielded',
    );
    for (const [index, task] of ['alpha', 'beta', 'gamma'].entries()) {
      finish.get(task)!();
      await waitFor(() => parentCalls() === 3 + index, 8000, `the wake for ${task}`);
    }
    await waitFor(() => h!.channel.sent.some((m) => m.text === 'all three are in'), 8000, 'the final answer');
    await quiesce(h);
    const parent = h.model.requests.filter((r) => !isSubagent(r));
    // spawn, yield, then one model call per arrival: yield, yield, final answer.
    expect(parent).toHaveLength(5);
    expect(afterYield).toHaveLength(0);
    const wakes = parent.slice(2);
    for (const [index, request] of wakes.entries()) {
      const notices = wakeNotices(request);
      expect(notices).toHaveLength(index + 1);
      expect(notices.at(-1)).toMatch(/woke because: child agent:main:subagent:[^ ]+ finished\./);
    }
    expect(wakeNotices(wakes[0]!)[0]).toContain('(waiting for: three results)');
    // The yield is over once it woke, and the chat got exactly the one answer.
    expect((await h.store.getSession(MAIN))?.meta?.yield).toBeUndefined();
    expect(h.channel.sent.map((m) => m.text)).toEqual(['all three are in']);
  });

  it('wakes at the timeout and says so', async () => {
    h = await startSubagentHarness({
      storeKind,
      script: (request) => {
        if (isSubagent(request)) return childStep(request);
        const tail = last(request);
        if (tail?.role === 'toolResult' && tail.toolName === 'sessions_spawn') {
          return { toolCalls: [{ name: 'sessions_yield', arguments: { timeoutSeconds: 1 } }] };
        }
        if (wakeNotices(request).length > 0) return `woke: ${wakeNotices(request).at(-1)}`;
        return { toolCalls: [{ name: 'sessions_spawn', arguments: { task: 'slow:4000' } }] };
      },
    });
    await seedMain(h.store);
    const started = Date.now();
    await h.runtime.gateway.call('agent', { sessionKey: MAIN, message: 'Start the slow one' });
    await waitFor(() => h!.channel.sent.length > 0, 4000, 'the timeout wake');
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(h.channel.sent[0]!.text).toMatch(/woke because: the timeout of 1 s passed\./);
    expect(h.model.requests.filter((r) => !isSubagent(r))).toHaveLength(3);
  });

  it('refuses when nothing is pending, and bad arguments, each with a sentence', async () => {
    h = await startSubagentHarness({ storeKind, script: () => 'ok' });
    await seedMain(h.store);
    const tools = await h.tools(MAIN);
    const refused = await call<{ status: string; error: string }>(tools.sessions_yield, {});
    expect(refused.status).toBe('error');
    expect(refused.error).toMatch(/Nothing is pending/);
    expect((await h.store.getSession(MAIN))?.meta?.yield).toBeUndefined();
    for (const args of [{ timeoutSeconds: 0 }, { timeoutSeconds: 10 ** 6 }, { reason: '' }, { other: 1 }]) {
      const bad = await call<{ status: string; error: string }>(tools.sessions_yield, args);
      expect(bad.status).toBe('error');
      expect(bad.error).toMatch(/sessions_yield/);
    }
    const blank = await call<{ status: string; error: string }>(tools.sessions_yield, { reason: '  ' });
    expect(blank.error).toMatch(/reason is blank/);
  });
});

describe('sessions_yield across a restart', () => {
  it('re-arms the timeout stored on the session, so it never sleeps for good', async () => {
    const { store, file, cleanup } = await makeStore('sqlite');
    const script = (request: ModelRequest) => {
      if (isSubagent(request)) return childStep(request);
      const tail = last(request);
      if (tail?.role === 'toolResult' && tail.toolName === 'sessions_spawn') {
        return { toolCalls: [{ name: 'sessions_yield', arguments: { timeoutSeconds: 1 } }] };
      }
      if (wakeNotices(request).length > 0) return `woke: ${wakeNotices(request).at(-1)}`;
      return { toolCalls: [{ name: 'sessions_spawn', arguments: { task: 'slow:60000' } }] };
    };
    try {
      h = await startSubagentHarness({ store, script });
      await seedMain(h.store);
      await h.runtime.gateway.call('agent', { sessionKey: MAIN, message: 'Start the slow one' });
      await waitFor(async () => (await store.getSession(MAIN))?.meta?.yield !== undefined, 3000, 'the yield');
      await waitFor(async () => (await store.getSession(MAIN))?.status === 'done', 3000, 'the turn end');
      await h.close();
      h = undefined;
      const reopened = (await makeStore('sqlite', file)).store;
      h = await startSubagentHarness({ store: reopened, script });
      await waitFor(() => h!.channel.sent.length > 0, 4000, 'the timeout wake after the restart');
      expect(h.channel.sent[0]!.text).toMatch(/the timeout of 1 s passed/);
    } finally {
      await h?.close();
      h = undefined;
      cleanup();
    }
  });
});
