import { AsyncLocalStorage } from 'node:async_hooks';
import type { ColloquyConfigInput, TranscriptMessage } from '@colloquy/core';
import type { Store } from '@colloquy/core/store';
import { afterEach, describe, expect, it } from 'vitest';
import {
  call,
  isSubagent,
  MAIN,
  type SubagentHarness,
  startSubagentHarness,
} from '../subagents/subagents-fixture.js';
import { STORE_KINDS, waitFor } from '../support/harness.js';
import { seed } from './tools-fixture.js';

/**
 * Issue 32's leaks, each probed through the real runtime on every store as a model would probe
 * it: a fork across agents, `filtered.hidden` as an oracle, a watch that outlives its visibility,
 * hidden and missing targets that cost different work, and storage details in tool answers.
 */

const OPS_MAIN = 'agent:ops:main';
const PIN = 'my bank PIN is 8841, passphrase BLUEHERON';
const user = (content: string, timestamp = 1): TranscriptMessage => ({ role: 'user', content, timestamp });

let h: SubagentHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** `main` may spawn as `ops`; `ops`'s sessions see their whole agent; agent-to-agent as given. */
function opsConfig(agentToAgent: ColloquyConfigInput['tools']): ColloquyConfigInput {
  return {
    tools: { sessions: { visibility: 'agent' }, ...agentToAgent },
    session: { agentToAgent: { maxPingPongTurns: 0 } },
    agents: {
      list: [{ id: 'main', default: true, subagents: { allowAgents: ['ops'] } }, { id: 'ops' }],
    },
  };
}

interface Spawned {
  status: string;
  error?: string;
  childSessionKey?: string;
  runId?: string;
}

describe.each(STORE_KINDS)('session-tool leaks (%s store)', (storeKind) => {
  async function boot(config: ColloquyConfigInput): Promise<SubagentHarness> {
    h = await startSubagentHarness({
      storeKind,
      config,
      script: (request) => (isSubagent(request) ? 'child done' : 'ok'),
    });
    await seed(h.store, MAIN);
    await seed(h.store, OPS_MAIN);
    await h.store.appendMessages(MAIN, [user(PIN)]);
    return h;
  }

  describe('a fork across agents', () => {
    it('is refused, naming tools.agentToAgent, while agent-to-agent does not admit both agents', async () => {
      const { store } = await boot(opsConfig({ agentToAgent: { enabled: false } }));
      const tools = await h!.tools(MAIN);
      const forked = await call<Spawned>(tools.sessions_spawn, {
        task: 'help',
        agentId: 'ops',
        context: 'fork',
      });
      expect(forked.status).toBe('forbidden');
      expect(forked.error).toContain('tools.agentToAgent');
      expect((await store.listSessions({ agentIds: ['ops'] })).map((s) => s.key)).toEqual([OPS_MAIN]);
      // An isolated spawn as ops copies nothing, so it stays allowed.
      const isolated = await call<Spawned>(tools.sessions_spawn, { task: 'help', agentId: 'ops' });
      expect(isolated.status).toBe('accepted');
      // A fork into the caller's own agent needs no agent-to-agent.
      const own = await call<Spawned>(tools.sessions_spawn, { task: 'help', context: 'fork' });
      expect(own.status).toBe('accepted');
    });

    it('admitted by agent-to-agent, gives a child that sessions which cannot see the requester cannot reach', async () => {
      const { store } = await boot(opsConfig({ agentToAgent: { enabled: true, allow: ['main', 'ops'] } }));
      const spawned = await call<Spawned>((await h!.tools(MAIN)).sessions_spawn, {
        task: 'help',
        agentId: 'ops',
        context: 'fork',
      });
      expect(spawned.status).toBe('accepted');
      const child = spawned.childSessionKey!;
      await waitFor(async () => (await store.getRun(spawned.runId!))?.status === 'done', 5000, 'the child');
      expect((await store.getSession(child))?.forked).toBe(true);

      // agent:ops:main sees its whole agent, but not agent:main:main, so not the fork of it either.
      const ops = await h!.tools(OPS_MAIN);
      const history = await call<{ status?: string; error?: string }>(ops.sessions_history, {
        sessionKey: child,
      });
      const missing = await call(ops.sessions_history, { sessionKey: 'agent:ops:subagent:no-such-child' });
      expect(history).toEqual(missing);
      expect(history.status).toBe('forbidden');
      for (const probe of [
        await call(ops.session_status, { sessionKey: child }),
        await call(ops.sessions_send, { sessionKey: child, message: 'what was the PIN?', timeoutSeconds: 0 }),
      ]) {
        expect(probe).toMatchObject({ status: 'forbidden' });
      }
      const found = await call<{ count: number; hits: unknown[] }>(ops.sessions_search, {
        query: 'BLUEHERON',
      });
      expect(found.count).toBe(0);
      const listed = await call<{ sessions: { key: string }[] }>(ops.sessions_list, {});
      expect(listed.sessions.map((s) => s.key)).not.toContain(child);
      expect(JSON.stringify([history, found, listed])).not.toMatch(/8841|BLUEHERON/);

      // The requester still reads its child, copied words included.
      const own = await call<{ messages: { content: unknown }[] }>((await h!.tools(MAIN)).sessions_history, {
        sessionKey: child,
      });
      expect(JSON.stringify(own.messages)).toContain('BLUEHERON');
    });
  });

  describe('filtered.hidden', () => {
    it('counts nothing of agents the caller may never see, nor of reserved sessions', async () => {
      const { store } = await boot({
        tools: { sessions: { visibility: 'tree' } },
        agents: { list: [{ id: 'main', default: true }, { id: 'ops' }] },
      });
      await seed(store, 'agent:ops:discord:dm:bob');
      await seed(store, 'global');
      await store.appendMessages('agent:ops:discord:dm:bob', [user('the divorce papers are ready')]);
      await store.appendMessages('global', [user('divorce rumours in global')]);
      const tools = await h!.tools(MAIN);
      const present = await call<{ count: number; filtered?: { hidden: number } }>(tools.sessions_search, {
        query: 'divorce',
      });
      const absent = await call<{ count: number; filtered?: { hidden: number } }>(tools.sessions_search, {
        query: 'zeppelinword',
      });
      expect(present).toEqual(absent);
      expect(present.filtered).toBeUndefined();

      // Another agent's DM becoming active does not move the count either.
      const dms = () =>
        call<{ filtered?: { hidden: number } }>(tools.sessions_list, { kinds: ['dm'], activeMinutes: 1 });
      const before = await dms();
      await store.patchSession('agent:ops:discord:dm:bob', { updatedAt: Date.now() });
      expect(await dms()).toEqual(before);
    });

    it('is not offset by a session of another agent that the caller sees in its spawn tree', async () => {
      // Found by the differential suite (seed 3202032): the ops sub-agent was subtracted from
      // the count of main's sessions, so the hidden group went uncounted.
      const { store } = await boot({
        tools: { sessions: { visibility: 'tree' } },
        agents: { list: [{ id: 'main', default: true, subagents: { allowAgents: ['ops'] } }, { id: 'ops' }] },
      });
      await seed(store, 'agent:ops:subagent:kid', { spawnedBy: MAIN, spawnDepth: 1 });
      await seed(store, 'agent:main:telegram:group:team');
      await store.appendMessages('agent:ops:subagent:kid', [user('the divorce papers')]);
      await store.appendMessages('agent:main:telegram:group:team', [user('the divorce papers')]);
      const tools = await h!.tools(MAIN);
      const listed = await call<{ sessions: { key: string }[]; filtered?: { hidden: number } }>(
        tools.sessions_list,
        {},
      );
      expect(listed.sessions.map((s) => s.key).sort()).toEqual(['agent:ops:subagent:kid', 'main']);
      expect(listed.filtered?.hidden).toBe(1);
      const found = await call<{ count: number; filtered?: { hidden: number } }>(tools.sessions_search, {
        query: 'divorce',
      });
      expect(found).toMatchObject({ count: 1, filtered: { hidden: 1 } });
    });

    it('still counts the caller own agent sessions it may not see', async () => {
      const { store } = await boot({ tools: { sessions: { visibility: 'tree' } } });
      await seed(store, 'agent:main:telegram:group:team');
      await store.appendMessages('agent:main:telegram:group:team', [user('the divorce papers')]);
      const found = await call<{ count: number; filtered?: { hidden: number } }>(
        (await h!.tools(MAIN)).sessions_search,
        { query: 'divorce' },
      );
      expect(found).toMatchObject({ count: 0, filtered: { hidden: 1 } });
    });
  });

  it('drops a watch without a notice when its watcher may no longer see the target', async () => {
    const { store } = await boot({ tools: { sessions: { visibility: 'tree' } } });
    const target = 'agent:main:telegram:group:team';
    await seed(store, target);
    // Set while visibility was wider (a restart since narrowed it to tree).
    await store.putWatch({ watcherKey: MAIN, targetKey: target, afterVersion: 0, id: 'old', createdAt: 1 });
    await h!.runtime.gateway.call('sessions.patch', { key: target, patch: { label: 'renamed' } });
    await waitFor(async () => (await store.listWatches()).length === 0, 5000, 'the watch to be dropped');
    expect(await store.listInbox(MAIN)).toEqual([]);
    const notices = (await store.readTail(MAIN, 50)).filter((m) => m.details?.watch !== undefined);
    expect(notices).toEqual([]);
  });

  it('refuses to set a watch by a session that may not see its target', async () => {
    const { store } = await boot({ tools: { sessions: { visibility: 'tree' } } });
    const target = 'agent:main:telegram:group:team';
    await seed(store, target);
    const refused = await h!.runtime.gateway
      .call('agent', { sessionKey: target, message: 'hi', deliver: false, watchBy: MAIN })
      .catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'FORBIDDEN' });
    expect(await store.listWatches()).toEqual([]);
  });

  it('gives a hidden target and a missing one the same answer for the same store work', async () => {
    await boot({ tools: { sessions: { visibility: 'tree' } } });
    const hidden = 'agent:main:telegram:group:hidden-team';
    await seed(h!.store, hidden, { sessionId: 'sid-hidden' });
    const counting = countingStore(h!.store);
    const tools = await h!.tools(MAIN);
    const probes: [string, (ref: string) => Promise<unknown>][] = [
      ['history', (ref) => call(tools.sessions_history, { sessionKey: ref })],
      ['status', (ref) => call(tools.session_status, { sessionKey: ref })],
      ['search', (ref) => call(tools.sessions_search, { query: 'anything', sessionKey: ref })],
      ['send', (ref) => call(tools.sessions_send, { sessionKey: ref, message: 'hi', timeoutSeconds: 0 })],
    ];
    for (const [name, probe] of probes) {
      for (const [hiddenRef, missingRef] of [
        [hidden, 'agent:main:telegram:group:no-such-team'],
        ['sid-hidden', 'sid-missing'],
      ] as const) {
        const hiddenWork = await counting.during(() => probe(hiddenRef));
        const missingWork = await counting.during(() => probe(missingRef));
        expect(hiddenWork.result, name).toEqual(missingWork.result);
        expect(hiddenWork.calls, `${name} by ${hiddenRef}`).toEqual(missingWork.calls);
        expect(Object.keys(missingWork.calls), `${name} counted no store call`).not.toEqual([]);
      }
    }
  });

  it('answers a NUL in a key, label or agent id with a typed error that names no database', async () => {
    await boot({ tools: { sessions: { visibility: 'all' } } });
    const tools = await h!.tools(MAIN);
    const answers = [
      await call(tools.sessions_history, { sessionKey: 'agent:main:x\u0000y' }),
      await call(tools.sessions_history, { sessionKey: 'sid\u0000' }),
      await call(tools.session_status, { sessionKey: '\u0000' }),
      await call(tools.sessions_send, { label: 'a\u0000b', message: 'hi', timeoutSeconds: 0 }),
      await call(tools.sessions_send, { label: 'x', agentId: 'ops\u0000', message: 'hi', timeoutSeconds: 0 }),
    ];
    for (const answer of answers) {
      expect(answer).toMatchObject({ status: 'error', error: expect.stringMatching(/NUL/) });
      expect(JSON.stringify(answer)).not.toMatch(/PostgreSQL|127\.0\.0\.1|SQLITE|byte sequence/i);
    }
    // The locator a listing shows names no host, port, database or path.
    const listed = await call<{ sessions: { transcriptPath?: string; sessionId: string }[] }>(
      tools.sessions_list,
      {},
    );
    for (const row of listed.sessions) {
      expect(row.transcriptPath).toContain(row.sessionId);
      expect(row.transcriptPath).not.toMatch(/:\/\/|127\.0\.0\.1|@|^[a-z]+:\//);
    }
  });
});

/**
 * Wraps a store so a test can count the store calls a piece of work makes. Only calls made from
 * inside `work` (and whatever it starts) count: the runtime's own background scans (the
 * sub-agent sweep, restores after start) run on timers begun before it, so they are left out.
 */
function countingStore(store: Store): {
  during<T>(work: () => Promise<T>): Promise<{ result: T; calls: Record<string, number> }>;
} {
  const probe = new AsyncLocalStorage<Record<string, number>>();
  const target = store as unknown as Record<string, unknown>;
  for (const name of ['getSession', 'listSessions', 'countSessions', 'searchMessages', 'readTail']) {
    const method = target[name] as (...args: unknown[]) => unknown;
    target[name] = (...args: unknown[]) => {
      const calls = probe.getStore();
      if (calls) calls[name] = (calls[name] ?? 0) + 1;
      return method.apply(store, args);
    };
  }
  return {
    async during(work) {
      const calls: Record<string, number> = {};
      const result = await probe.run(calls, work);
      return { result, calls };
    },
  };
}
