import type { Store, StoreTransaction } from '@colloquy/core';
import { lastUserText } from '@colloquy/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { STORE_KINDS, waitFor } from '../support/harness.js';
import {
  allOutbox,
  announcesIn,
  call,
  isSubagent,
  MAIN,
  type SubagentHarness,
  seedMain,
  startSubagentHarness,
  userTexts,
} from './subagents-fixture.js';

let h: SubagentHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const settled = async (store: Store) => (await allOutbox(store)).every((row) => row.status !== 'pending');

describe.each(STORE_KINDS)('announce on the %s store', (storeKind) => {
  it('delivers an announce as soon as the ending run committed, without waiting for the poll', async () => {
    h = await startSubagentHarness({
      storeKind,
      // The child ends well after the parent's turn settled, so only its own end can start the delivery.
      script: (request) => (isSubagent(request) ? { text: 'done', delayMs: 300 } : 'noted'),
      subagents: { retryBaseMs: 20, retryMaxMs: 200, pollMs: 60_000 },
    });
    await seedMain(h.store);
    const spawned = await call<{ runId: string; childSessionKey: string }>(
      (await h.tools(MAIN)).sessions_spawn,
      {
        task: 'Be quick',
      },
    );
    const store = h.store;
    await waitFor(
      async () => (await store.getOutbox(spawned.childSessionKey, spawned.runId))?.status === 'delivered',
      2000,
      'the announce, long before the 60 s poll',
    );
  });

  it('announces a finished child once to the parent inbox and chat, with status, result, notes and stats', async () => {
    h = await startSubagentHarness({
      storeKind,
      script: (request) =>
        isSubagent(request) ? 'The answer is 42.' : `parent saw: ${lastUserText(request)}`,
    });
    await seedMain(h.store);
    const spawned = await call<{ status: string; runId: string; childSessionKey: string }>(
      (await h.tools(MAIN)).sessions_spawn,
      { task: 'Compute the answer', label: 'calc' },
    );
    expect(spawned.status).toBe('accepted');
    const store = h.store;
    await waitFor(
      async () => (await store.getOutbox(spawned.childSessionKey, spawned.runId))?.status === 'delivered',
    );
    await waitFor(
      async () => (await store.getSession(MAIN))?.status === 'done',
      3000,
      'the parent woke and answered',
    );

    const row = (await store.getOutbox(spawned.childSessionKey, spawned.runId))!;
    expect(row.platformMessageId).toMatch(/^memory-out-/);
    expect(row.inboxAt).toBeTypeOf('number');
    const chat = h.channel.sent.filter((m) => m.text.startsWith('Sub-agent'));
    expect(chat).toHaveLength(1);
    const text = chat[0]!.text;
    expect(text).toContain(`Sub-agent "calc" (${spawned.childSessionKey}) finished.`);
    expect(text).toContain('Status: ok');
    expect(text).toContain('Result:\nThe answer is 42.');
    expect(text).toContain('Notes: none');
    const child = (await store.getSession(spawned.childSessionKey))!;
    expect(text).toMatch(/Stats: runtime \d+ ms · tokens \d+ in \/ \d+ out \/ \d+ total/);
    expect(text).toContain(`sessionKey ${spawned.childSessionKey}`);
    expect(text).toContain(`sessionId ${child.sessionId}`);
    expect(text).toContain('transcript ');

    // The parent's next turn read it, as an announce (not as its human).
    expect(await announcesIn(store, MAIN)).toEqual([{ runId: spawned.runId, text }]);
    const parentTurn = h.model.requests.find((r) => !isSubagent(r))!;
    expect(userTexts(parentTurn).at(-1)).toMatch(
      /^\[Announce from session agent:main:subagent:[^\]]+; it is not from the human user\]/,
    );
    expect((await store.getRun(spawned.runId))?.announce).toMatchObject({ outcome: 'delivered' });
    expect(await store.listInbox(MAIN)).toEqual([]);
  });

  it('keeps an exact ANNOUNCE_SKIP silent and records it as skipped', async () => {
    h = await startSubagentHarness({ storeKind, script: () => 'ANNOUNCE_SKIP' });
    await seedMain(h.store);
    const spawned = await call<{ runId: string; childSessionKey: string }>(
      (await h.tools(MAIN)).sessions_spawn,
      {
        task: 'Nothing to report',
      },
    );
    const store = h.store;
    await waitFor(async () => (await store.getOutbox(spawned.childSessionKey, spawned.runId)) !== undefined);
    await h.runtime.subagents.drain({ force: true });
    expect((await store.getOutbox(spawned.childSessionKey, spawned.runId))?.status).toBe('skipped');
    expect((await store.getRun(spawned.runId))?.announce).toMatchObject({
      outcome: 'skipped',
      reason: 'ANNOUNCE_SKIP',
    });
    expect(h.channel.sent).toEqual([]);
    expect(await store.listInbox(MAIN)).toEqual([]);
    expect(await announcesIn(store, MAIN)).toEqual([]);
  });

  it('takes Status from the runtime and falls back to the latest tool result for an empty reply', async () => {
    h = await startSubagentHarness({
      storeKind,
      script: (request) => {
        if (!isSubagent(request)) return 'ok';
        const task = userTexts(request)[0] ?? '';
        if (task.includes('tool then nothing')) {
          return request.messages.at(-1)?.role === 'toolResult'
            ? ''
            : { toolCalls: [{ name: 'echo', arguments: { text: 'from the tool' } }] };
        }
        if (task.includes('lie')) return 'Status: killed';
        return { error: { code: 'MODEL_ERROR', message: 'the provider fell over' } };
      },
    });
    await seedMain(h.store);
    const spawn = (await h.tools(MAIN)).sessions_spawn;
    const empty = await call<{ runId: string; childSessionKey: string }>(spawn, {
      task: 'tool then nothing',
    });
    const liar = await call<{ runId: string; childSessionKey: string }>(spawn, { task: 'lie about it' });
    const broken = await call<{ runId: string; childSessionKey: string }>(spawn, { task: 'break' });
    const store = h.store;
    await waitFor(async () => (await allOutbox(store)).length === 3 && (await settled(store)));
    const text = async (s: { runId: string; childSessionKey: string }) =>
      ((await store.getOutbox(s.childSessionKey, s.runId))!.payload as { text: string }).text;
    expect(await text(empty)).toContain('Status: ok');
    expect(await text(empty)).toContain('Result:\n{\n  "echoed": "from the tool"\n}');
    expect(await text(empty)).toContain('No final reply; Result is the latest tool result.');
    expect(await text(liar)).toContain('Status: ok\nResult:\nStatus: killed');
    expect(await text(broken)).toContain('Status: error');
    expect(await text(broken)).toContain('the provider fell over');
  });

  it('ends a child at runTimeoutSeconds and announces Status: timeout', async () => {
    h = await startSubagentHarness({
      storeKind,
      script: (request) => (isSubagent(request) ? { text: 'too late', delayMs: 5000 } : 'ok'),
    });
    await seedMain(h.store);
    const spawned = await call<{ runId: string; childSessionKey: string }>(
      (await h.tools(MAIN)).sessions_spawn,
      {
        task: 'Take forever',
        runTimeoutSeconds: 1,
      },
    );
    const store = h.store;
    await waitFor(
      async () => (await store.getOutbox(spawned.childSessionKey, spawned.runId))?.status === 'delivered',
      4000,
    );
    const text = (
      (await store.getOutbox(spawned.childSessionKey, spawned.runId))!.payload as { text: string }
    ).text;
    expect((await store.getRun(spawned.runId))?.status).toBe('timeout');
    expect(text).toContain('Status: timeout');
  });

  it('fans out: three children spawned in one step reach the parent exactly once, all in its next turn', async () => {
    let parentTurns = 0;
    h = await startSubagentHarness({
      storeKind,
      script: (request) => {
        if (isSubagent(request)) return `result of ${userTexts(request)[0]?.split('\n').at(-1)}`;
        parentTurns++;
        if (parentTurns === 1) {
          return {
            toolCalls: ['alpha', 'beta', 'gamma'].map((task) => ({
              name: 'sessions_spawn',
              arguments: { task, label: task },
            })),
          };
        }
        // The spawning turn ends only after the children did, so their results wait for it.
        if (parentTurns === 2) return { text: 'spawned three', delayMs: 300 };
        return 'all in';
      },
    });
    await seedMain(h.store);
    await h.runtime.gateway.call('agent', { sessionKey: MAIN, message: 'Research three things' });
    const store = h.store;
    await waitFor(
      async () => parentTurns >= 3 && (await store.getSession(MAIN))?.status === 'done',
      5000,
      'three turns',
    );
    await waitFor(async () => (await allOutbox(store)).length === 3 && (await settled(store)));

    const wakeTurn = h.model.requests.filter((r) => !isSubagent(r))[2]!;
    const seen = userTexts(wakeTurn).filter((t) => t.includes('Sub-agent'));
    expect(seen).toHaveLength(3);
    for (const label of ['alpha', 'beta', 'gamma']) {
      expect(seen.filter((t) => t.includes(`result of ${label}`))).toHaveLength(1);
    }
    const announces = await announcesIn(store, MAIN);
    expect(announces).toHaveLength(3);
    expect(new Set(announces.map((a) => a.runId)).size).toBe(3);
    expect(h.channel.sent.filter((m) => m.text.startsWith('Sub-agent'))).toHaveLength(3);
    expect(parentTurns).toBe(3);
  });
});

describe('announce delivery under faults', () => {
  it.each([
    [
      'settling the row',
      (patch: { status?: string; platformMessageId?: string }) => patch.status === 'delivered',
    ],
    [
      'recording the platform message id',
      (patch: { platformMessageId?: string }) => patch.platformMessageId !== undefined,
    ],
  ])(
    'sends the chat copy once when %s throws right after the platform send succeeded',
    async (_what, failsOn) => {
      let failNext = true;
      const { store: inner, cleanup } = await (await import('../support/harness.js')).makeStore('sqlite');
      // A store that fails the first write after a successful platform send (recording the outcome),
      // whether it is made on the store or on a transaction handle.
      const failing = <T extends object>(target: T): T =>
        new Proxy(target, {
          get(object, name, receiver) {
            const value = Reflect.get(object, name, receiver);
            if (typeof value !== 'function') return value;
            if (name === 'transaction') {
              return (fn: (tx: StoreTransaction) => Promise<unknown>) =>
                (value as StoreTransaction['transaction']).call(receiver, (tx) => fn(failing(tx)));
            }
            if (name !== 'updateOutbox') return value;
            return (...args: unknown[]) => {
              const patch = args[2] as { status?: string; platformMessageId?: string };
              if (failNext && failsOn(patch)) {
                failNext = false;
                throw new Error('injected crash right after the platform send');
              }
              return (value as (...a: unknown[]) => unknown).apply(object, args);
            };
          },
        });
      const store = failing(inner);
      h = await startSubagentHarness({ store, script: (r) => (isSubagent(r) ? 'done once' : 'noted') });
      await seedMain(h.store);
      const spawned = await call<{ runId: string; childSessionKey: string }>(
        (await h.tools(MAIN)).sessions_spawn,
        {
          task: 'Report once',
        },
      );
      await waitFor(
        async () => (await inner.getOutbox(spawned.childSessionKey, spawned.runId))?.status === 'delivered',
        4000,
      );
      expect(failNext).toBe(false);
      const row = (await inner.getOutbox(spawned.childSessionKey, spawned.runId))!;
      expect(row.attempts).toBe(1);
      expect(row.lastError).toContain('injected crash');
      expect(h.channel.sent.filter((m) => m.text.includes('done once'))).toHaveLength(1);
      await waitFor(async () => (await inner.getSession(MAIN))?.status === 'done');
      expect(await announcesIn(inner, MAIN)).toHaveLength(1);
      await h.close();
      h = undefined;
      cleanup();
    },
  );

  it('holds the announce while the requester is busy, then delivers it exactly once', async () => {
    h = await startSubagentHarness({
      script: (request) => {
        if (isSubagent(request)) return 'child finished';
        if (userTexts(request).at(-1)?.includes('long job')) return { text: 'long job done', delayMs: 700 };
        return 'noted the result';
      },
    });
    await seedMain(h.store);
    const store = h.store;
    await h.runtime.gateway.call('agent', { sessionKey: MAIN, message: 'long job', deliver: false });
    await h.model.waitForRequests(1);
    const spawned = await call<{ runId: string; childSessionKey: string }>(
      (await h.tools(MAIN)).sessions_spawn,
      {
        task: 'Quick one',
      },
    );
    await waitFor(async () => (await store.getOutbox(spawned.childSessionKey, spawned.runId)) !== undefined);
    await new Promise((resolve) => setTimeout(resolve, 200));
    // Busy: nothing in the inbox, nothing in the chat yet.
    expect((await store.getOutbox(spawned.childSessionKey, spawned.runId))?.status).toBe('pending');
    expect(await store.listInbox(MAIN)).toEqual([]);
    expect(h.channel.sent).toEqual([]);

    await waitFor(
      async () => (await store.getOutbox(spawned.childSessionKey, spawned.runId))?.status === 'delivered',
      4000,
    );
    await waitFor(
      async () =>
        (await announcesIn(store, MAIN)).length === 1 && (await store.getSession(MAIN))?.status === 'done',
    );
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(h.channel.sent.filter((m) => m.text.includes('child finished'))).toHaveLength(1);
    expect(await announcesIn(store, MAIN)).toHaveLength(1);
    const replies = h.model.requests.filter((r) => !isSubagent(r));
    expect(replies).toHaveLength(2);
  });

  it('retries a failed chat send with backoff and records the attempts', async () => {
    h = await startSubagentHarness({ script: (r) => (isSubagent(r) ? 'retry me' : 'noted') });
    await seedMain(h.store);
    h.channel.failNextSend();
    const spawned = await call<{ runId: string; childSessionKey: string }>(
      (await h.tools(MAIN)).sessions_spawn,
      {
        task: 'Report',
      },
    );
    const store = h.store;
    await waitFor(
      async () => (await store.getOutbox(spawned.childSessionKey, spawned.runId))?.status === 'delivered',
      4000,
    );
    const row = (await store.getOutbox(spawned.childSessionKey, spawned.runId))!;
    expect(row.attempts).toBe(1);
    expect(row.lastError).toContain('scripted send failure');
    expect(h.channel.sent.filter((m) => m.text.includes('retry me'))).toHaveLength(1);
    expect(await announcesIn(store, MAIN)).toHaveLength(1);
  });

  it('keeps the announce in the inbox when send policy denies the chat copy, and records the denial', async () => {
    h = await startSubagentHarness({
      config: { session: { sendPolicy: { rules: [{ match: { channel: 'memory' }, action: 'deny' }] } } },
      script: (r) => (isSubagent(r) ? 'quiet result' : 'noted'),
    });
    await seedMain(h.store);
    const spawned = await call<{ runId: string; childSessionKey: string }>(
      (await h.tools(MAIN)).sessions_spawn,
      {
        task: 'Report',
      },
    );
    const store = h.store;
    await waitFor(
      async () => (await store.getOutbox(spawned.childSessionKey, spawned.runId))?.status === 'delivered',
    );
    expect(h.channel.sent).toEqual([]);
    expect((await store.getRun(spawned.runId))?.announce?.outcome).toBe('denied');
    await waitFor(async () => (await announcesIn(store, MAIN)).length === 1);
  });

  it('parks the result in the owner main session when the requester no longer exists', async () => {
    h = await startSubagentHarness({
      script: (request) => {
        if (isSubagent(request)) return { text: 'orphan result', delayMs: 150 };
        return 'ok';
      },
    });
    await seedMain(h.store);
    const group = 'agent:main:memory:group:g1';
    await h.store.putSession({
      ...(await h.store.getSession(MAIN))!,
      key: group,
      sessionId: 'sid-g1',
      kind: 'group',
    });
    const spawned = await call<{ runId: string; childSessionKey: string }>(
      (await h.tools(group)).sessions_spawn,
      {
        task: 'Outlive your parent',
      },
    );
    await h.runtime.gateway.call('sessions.delete', { key: group });
    const store = h.store;
    await waitFor(
      async () => (await store.getOutbox(spawned.childSessionKey, spawned.runId))?.status === 'parked',
      4000,
    );
    const row = (await store.getOutbox(spawned.childSessionKey, spawned.runId))!;
    expect((row.payload as { parkedIn?: string }).parkedIn).toBe(MAIN);
    const parked = await store.listInbox(MAIN);
    expect(parked.map((e) => e.id)).toEqual([`announce:${spawned.childSessionKey}:${spawned.runId}`]);
    expect(parked[0]?.message.content).toContain('orphan result');
    expect((await store.getRun(spawned.runId))?.announce?.reason).toContain('parked in agent:main:main');
  });
});
