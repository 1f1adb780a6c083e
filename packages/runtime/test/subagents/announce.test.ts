import { setTimeout as sleep } from 'node:timers/promises';
import { MemoryStore, type Store, type StoreTransaction } from '@colloquy/core/store';
import { lastUserText } from '@colloquy/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { STORE_KINDS, waitFor } from '../support/harness.js';
import {
  allOutbox,
  announcesIn,
  call,
  isSubagent,
  MAIN,
  quiesce,
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

  it('announces a finished child once to the parent inbox; the chat gets only the parent’s own reply', async () => {
    h = await startSubagentHarness({
      storeKind,
      script: (request) =>
        isSubagent(request) ? 'The answer is 42.' : `parent saw: ${lastUserText(request)?.slice(0, 40)}`,
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
      async () => (await store.getSession(MAIN))?.status === 'done' && h!.channel.sent.length > 0,
      3000,
      'the parent woke and answered',
    );

    // The raw block (Status, Result, Notes, Stats) is in the parent's inbox and transcript only.
    const row = (await store.getOutbox(spawned.childSessionKey, spawned.runId))!;
    expect(row.inboxAt).toBeTypeOf('number');
    const [announce] = await announcesIn(store, MAIN);
    const text = announce!.text;
    expect(text).toContain(`Sub-agent "calc" (${spawned.childSessionKey}) finished.`);
    expect(text).toContain('Status: ok');
    expect(text).toContain('Result:\nThe answer is 42.');
    expect(text).toContain('Notes: none');
    const child = (await store.getSession(spawned.childSessionKey))!;
    expect(text).toMatch(/Stats: runtime \d+ ms · tokens \d+ in \/ \d+ out \/ \d+ total/);
    expect(text).toContain(`sessionKey ${spawned.childSessionKey}`);
    expect(text).toContain(`sessionId ${child.sessionId}`);
    expect(text).toContain('transcript ');

    // The chat sees one message about it: the parent's reply, in its own voice; no ids, no paths.
    await quiesce(h);
    const chat = h.channel.sent.map((m) => m.text);
    expect(chat).toHaveLength(1);
    expect(chat[0]).toMatch(/^parent saw: /);
    expect(chat.join('\n')).not.toContain(spawned.childSessionKey);
    expect(chat.join('\n')).not.toContain('Stats:');

    // The parent's turn read it as an announce (not as its human), told how to answer.
    const parentTurn = h.model.requests.find((r) => !isSubagent(r))!;
    expect(userTexts(parentTurn).at(-1)).toMatch(
      /^\[Announce from session agent:main:subagent:[^\]]+; it is not from the human user\. Your reply to it is the one chat message about this result: .* ANNOUNCE_SKIP to post nothing\]/,
    );
    expect((await store.getRun(spawned.runId))?.announce).toMatchObject({ outcome: 'delivered' });
    expect(await store.listInbox(MAIN)).toEqual([]);
  });

  it('posts nothing when the parent answers a result with exactly ANNOUNCE_SKIP', async () => {
    h = await startSubagentHarness({
      storeKind,
      script: (request) => (isSubagent(request) ? 'routine result' : 'ANNOUNCE_SKIP'),
    });
    await seedMain(h.store);
    const spawned = await call<{ runId: string; childSessionKey: string }>(
      (await h.tools(MAIN)).sessions_spawn,
      { task: 'Routine' },
    );
    const store = h.store;
    await waitFor(
      async () => (await store.getOutbox(spawned.childSessionKey, spawned.runId))?.status === 'delivered',
    );
    await waitFor(async () => (await store.getSession(MAIN))?.status === 'done');
    await quiesce(h);
    expect(h.channel.sent).toEqual([]);
    expect(await announcesIn(store, MAIN)).toHaveLength(1);
  });

  it('posts the plain fallback line once when the parent cannot answer (its model fails)', async () => {
    h = await startSubagentHarness({
      storeKind,
      script: (request) =>
        isSubagent(request)
          ? `The answer is ${'long '.repeat(200)}42.`
          : { error: { code: 'MODEL_ERROR', message: 'the model is down' } },
    });
    await seedMain(h.store);
    const spawned = await call<{ runId: string; childSessionKey: string }>(
      (await h.tools(MAIN)).sessions_spawn,
      { task: 'Compute', label: 'calc' },
    );
    const store = h.store;
    await waitFor(async () => h!.channel.sent.length > 0, 3000, 'the fallback');
    await quiesce(h);
    const chat = h.channel.sent.map((m) => m.text);
    expect(chat).toHaveLength(1);
    expect(chat[0]).toMatch(/^calc finished \(ok\): The answer is long long /);
    expect(chat[0]!.length).toBeLessThanOrEqual('calc finished (ok): '.length + 500);
    expect(chat[0]).not.toContain(spawned.childSessionKey);
    expect((await store.getOutbox(spawned.childSessionKey, spawned.runId))?.status).toBe('delivered');
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
        if (parentTurns === 2) return { text: 'spawned three', delayMs: 1000 };
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
    // The session is `done` once the turn is stored; its reply is sent just after.
    const channel = h.channel;
    await waitFor(() => channel.sent.some((m) => m.text === 'all in'), 5000, 'the reply "all in" sent');

    const wakeTurn = h.model.requests.filter((r) => !isSubagent(r))[2]!;
    const seen = userTexts(wakeTurn).filter((t) => t.includes('Sub-agent'));
    expect(seen).toHaveLength(3);
    for (const label of ['alpha', 'beta', 'gamma']) {
      expect(seen.filter((t) => t.includes(`result of ${label}`))).toHaveLength(1);
    }
    const announces = await announcesIn(store, MAIN);
    expect(announces).toHaveLength(3);
    expect(new Set(announces.map((a) => a.runId)).size).toBe(3);
    // One chat message per parent turn, never a raw block.
    expect(h.channel.sent.filter((m) => m.text.startsWith('Sub-agent'))).toHaveLength(0);
    expect(h.channel.sent.filter((m) => m.text === 'all in')).toHaveLength(1);
    expect(parentTurns).toBe(3);
  });
});

describe('announce delivery under faults', () => {
  it('sends the parent’s reply once when recording its delivery fails, and not again after a restart', async () => {
    let failures = 0;
    const { store: inner, file, cleanup } = await (await import('../support/harness.js')).makeStore('sqlite');
    // A store that fails every record of a delivered reply (right after the platform send; the
    // recorder's retries too, as a process that dies before its store comes back), whether it is
    // made on the store or on a transaction handle, by the store's own `recordDeliveries` or by
    // core's default over `updateRun`.
    const recordsDelivered = (name: string | symbol, args: unknown[]): boolean =>
      name === 'recordDeliveries'
        ? (args[0] as { state: { status: string } }[]).some((record) => record.state.status === 'delivered')
        : (args[1] as { meta?: { delivery?: { status?: string } } }).meta?.delivery?.status === 'delivered';
    const failing = <T extends object>(target: T): T =>
      new Proxy(target, {
        get(object, name, receiver) {
          const value = Reflect.get(object, name, receiver);
          if (typeof value !== 'function') return value;
          if (name === 'transaction') {
            return (fn: (tx: StoreTransaction) => Promise<unknown>) =>
              (value as StoreTransaction['transaction']).call(receiver, (tx) => fn(failing(tx)));
          }
          if (name !== 'updateRun' && name !== 'recordDeliveries') return value;
          return (...args: unknown[]) => {
            if (recordsDelivered(name, args)) {
              failures++;
              throw new Error('injected crash right after the platform send');
            }
            return (value as (...a: unknown[]) => unknown).apply(object, args);
          };
        },
      });
    h = await startSubagentHarness({
      store: failing(inner),
      script: (r) => (isSubagent(r) ? 'done once' : 'told the user once'),
    });
    await seedMain(h.store);
    await call((await h.tools(MAIN)).sessions_spawn, { task: 'Report once' });
    await waitFor(
      () => failures > 0 && h!.channel.sent.length === 1,
      4000,
      'the reply and the failed record',
    );
    await waitFor(async () => (await inner.getSession(MAIN))?.status === 'done');
    await h.close();
    const reopened = (await import('../support/harness.js')).makeStore;
    h = await startSubagentHarness({ store: (await reopened('sqlite', file)).store, script: () => 'never' });
    const wake = (await h.store.listRuns({ sessionKey: MAIN })).find((run) => run.meta?.wake === true)!;
    expect(wake.meta?.delivery).toMatchObject({ status: 'failed' });
    // Shutdown waits for the start's look at unsent replies: past it, nothing was sent again.
    const { channel } = h;
    await h.close();
    h = undefined;
    expect(channel.sent).toEqual([]);
    cleanup();
  });

  it('sends a reply planned by a turn whose process died before sending it, once, after the restart', async () => {
    const { store, file, cleanup } = await (await import('../support/harness.js')).makeStore('sqlite');
    await seedMain(store);
    const now = Date.now();
    await store.createRun({
      runId: 'r-planned',
      sessionKey: MAIN,
      lane: 'main',
      status: 'done',
      createdAt: now,
      updatedAt: now,
      endedAt: now,
      message: '',
      deliver: true,
      attempts: 1,
      reply: 'the answer that was never sent',
      meta: { pendingDelivery: { kind: 'reply', text: 'the answer that was never sent' } },
    });
    await store.close();
    const reopen = (await import('../support/harness.js')).makeStore;
    h = await startSubagentHarness({ store: (await reopen('sqlite', file)).store, script: () => 'unused' });
    await waitFor(() => h!.channel.sent.length === 1);
    expect(h.channel.sent[0]?.message.text).toBe('the answer that was never sent');
    const stored = h.store;
    await waitFor(
      async () =>
        ((await stored.getRun('r-planned'))?.meta?.delivery as { status?: string })?.status === 'delivered',
    );
    await h.close();
    h = await startSubagentHarness({ store: (await reopen('sqlite', file)).store, script: () => 'unused' });
    // Shutdown waits for the start's look at unsent replies: past it, nothing was sent again.
    const { channel } = h;
    await h.close();
    h = undefined;
    expect(channel.sent).toEqual([]);
    cleanup();
  });

  it('sends a resumed turn’s reply once while the start looks for replies the last process left unsent', async () => {
    const inner = new MemoryStore();
    await seedMain(inner);
    const now = Date.now();
    // The last process left a queued run; the restart resumes it at once.
    await inner.createRun({
      runId: 'r-left',
      sessionKey: MAIN,
      lane: 'main',
      status: 'queued',
      createdAt: now,
      updatedAt: now,
      message: 'are you there?',
      deliver: true,
      attempts: 0,
    });
    // A slow store: the look for ended runs answers late, and so does the `sending` mark, so the
    // resumed turn has ended (reply planned, not yet marked) when a late look would read it.
    const slow = new Proxy(inner, {
      get(object, name) {
        const value = Reflect.get(object, name, object);
        if (typeof value !== 'function') return value;
        if (name === 'listRuns') {
          return async (...args: Parameters<Store['listRuns']>) => {
            if (args[0]?.statuses?.includes('done')) await sleep(150);
            return object.listRuns(...args);
          };
        }
        if (name === 'updateRun') {
          return async (...args: Parameters<Store['updateRun']>) => {
            const delivery = args[1].meta?.delivery as { status?: string } | undefined;
            if (delivery?.status === 'sending') await sleep(400);
            return object.updateRun(...args);
          };
        }
        return (value as (...a: unknown[]) => unknown).bind(object);
      },
    });
    h = await startSubagentHarness({ store: slow, script: () => 'yes, here' });
    await waitFor(
      async () =>
        ((await inner.getRun('r-left'))?.meta?.delivery as { status?: string } | undefined)?.status ===
        'delivered',
    );
    const { channel } = h;
    await h.close();
    h = undefined;
    expect(channel.sent.map((m) => m.message.text)).toEqual(['yes, here']);
  });

  it('wakes at start a session whose inbox entry was stored but whose wake a crash cut', async () => {
    const store = new MemoryStore();
    await seedMain(store);
    await store.putInbox({
      sessionKey: MAIN,
      id: 'announce:left',
      createdAt: Date.now(),
      message: { role: 'user', content: 'Sub-agent "left" finished: the result', timestamp: Date.now() },
    });
    h = await startSubagentHarness({ store, script: () => 'read the result' });
    await waitFor(() => h!.channel.sent.length === 1, 3000, 'the wake turn’s reply');
    expect(h.channel.sent[0]?.message.text).toBe('read the result');
    expect(await store.listInbox(MAIN)).toEqual([]);
    expect(userTexts(h.model.requests[0]!)).toContain('Sub-agent "left" finished: the result');
  });

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
    // A drain that ran while the requester is busy: nothing in the inbox, nothing in the chat yet.
    await h.runtime.subagents.drain({ force: true });
    expect(h.model.requests.filter((r) => !isSubagent(r))).toHaveLength(1);
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
    await quiesce(h);
    expect(h.channel.sent.filter((m) => m.text.includes('child finished'))).toHaveLength(0);
    expect(h.channel.sent.map((m) => m.text)).toEqual(['noted the result']);
    expect(await announcesIn(store, MAIN)).toHaveLength(1);
    const replies = h.model.requests.filter((r) => !isSubagent(r));
    expect(replies).toHaveLength(2);
  });

  it('keeps the announce in the inbox when send policy denies the parent’s reply, and records the denial', async () => {
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
    await waitFor(async () => (await announcesIn(store, MAIN)).length === 1);
    await waitFor(async () => (await store.getSession(MAIN))?.status === 'done');
    expect(h.channel.sent).toEqual([]);
    expect((await store.getRun(spawned.runId))?.announce?.outcome).toBe('delivered');
    const wake = (await store.listRuns({ sessionKey: MAIN })).find((run) => run.meta?.wake === true)!;
    // Marked `sending` as the turn ended; the outcome is recorded after the pipeline answered.
    await waitFor(async () => {
      const delivery = (await store.getRun(wake.runId))?.meta?.delivery as { status?: string } | undefined;
      return delivery !== undefined && delivery.status !== 'sending';
    });
    expect((await store.getRun(wake.runId))?.meta?.delivery).toMatchObject({ status: 'denied' });
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
