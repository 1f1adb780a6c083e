import type { TranscriptMessage } from '@colloquy/core';
import { type InboundCommit, type Store, turnOperations } from '@colloquy/core/store';
import { describe, expect, it } from 'vitest';
import { makeRunRecord, makeSessionRecord, T0 } from '../fakes/record-factories.js';
import { useFreshStore } from './fresh-store.js';
import type { StoreConformanceOptions } from './store-cases.js';

const KEY = 'agent:main:memory:dm:ada';
const say = (text: string, role: 'user' | 'assistant' = 'user'): TranscriptMessage => ({
  role,
  content: text,
  timestamp: T0,
});

/** An inbound commit of run `runId` that may begin its turn. */
function inbound(runId: string, begin = true): InboundCommit {
  const run = makeRunRecord(runId, KEY, { deliver: true, message: `text of ${runId}` });
  return {
    session: {
      create: makeSessionRecord(KEY, { kind: 'dm', displayName: 'Ada' }),
      update: { displayName: 'Ada', updatedAt: T0 + 1 },
    },
    run,
    ...(begin
      ? {
          begin: {
            input: say(run.message),
            run: { ...run, status: 'running', startedAt: T0 + 1, attempts: 1 },
            session: { status: 'running', startedAt: T0 + 1 },
          },
        }
      : {}),
  };
}

/**
 * The Store conformance cases of the turn operations (`commitInbound`, `endTurn`,
 * `recordDeliveries`), through `turnOperations`: a store's own implementation, or core's default.
 *
 * @param makeStore - returns a fresh, empty store for each test
 * @param options - cleanup after each test
 */
export function describeTurnCases(
  makeStore: () => Store | Promise<Store>,
  options: StoreConformanceOptions = {},
): void {
  let store!: Store;
  useFreshStore(makeStore, options, (fresh) => {
    store = fresh;
  });

  describe('turn operations: commitInbound', () => {
    it('creates the session and begins the turn of an idle session, input first', async () => {
      const result = await turnOperations(store).commitInbound(inbound('r1'));
      expect(result).toMatchObject({
        status: 'begun',
        session: { key: KEY, status: 'running', displayName: 'Ada' },
        run: { runId: 'r1', status: 'running', attempts: 1 },
        input: { seq: 1, role: 'user', content: 'text of r1' },
      });
      expect(await store.getRun('r1')).toMatchObject({ status: 'running', startedAt: T0 + 1 });
      expect(await store.getSession(KEY)).toMatchObject({
        kind: 'dm',
        status: 'running',
        displayName: 'Ada',
      });
      expect((await store.readTail(KEY, 5)).map((m) => m.content)).toEqual(['text of r1']);
    });

    it('updates an existing session and queues the run when no turn may begin', async () => {
      await store.putSession(makeSessionRecord(KEY, { kind: 'dm', label: 'kept' }));
      const result = await turnOperations(store).commitInbound(inbound('r1', false));
      expect(result).toMatchObject({
        status: 'queued',
        session: { label: 'kept', displayName: 'Ada' },
        run: { status: 'queued' },
      });
      expect(await store.getRun('r1')).toMatchObject({ status: 'queued' });
      expect(await store.readTail(KEY, 5)).toEqual([]);
    });

    it('queues instead of beginning when the inbox holds an entry or the session is yielded', async () => {
      await store.putSession(makeSessionRecord(KEY, { kind: 'dm' }));
      await store.putInbox({ sessionKey: KEY, id: 'i1', message: say('an announce'), createdAt: T0 });
      expect((await turnOperations(store).commitInbound(inbound('r1'))).status).toBe('queued');
      await store.consumeInbox(KEY, ['i1'], T0);
      await store.patchSession(KEY, { meta: { yield: { id: 'y1', at: T0 } } });
      expect((await turnOperations(store).commitInbound(inbound('r2'))).status).toBe('queued');
      expect(await store.readTail(KEY, 5)).toEqual([]);
    });

    it('writes nothing for a run id it has (a message delivered twice)', async () => {
      await turnOperations(store).commitInbound(inbound('r1', false));
      const again = inbound('r1');
      again.session.update = { displayName: 'Changed' };
      expect(await turnOperations(store).commitInbound(again)).toEqual({ status: 'duplicate' });
      expect((await store.getSession(KEY))?.displayName).toBe('Ada');
      expect(await store.getRun('r1')).toMatchObject({ status: 'queued' });
    });

    it('clears the fields an update sets to null, and the session is listed by what was written', async () => {
      await store.putSession(makeSessionRecord(KEY, { kind: 'dm', label: 'old', displayName: 'Ada' }));
      const commit = inbound('r1', false);
      commit.session.update = { label: 'new', displayName: null, updatedAt: T0 + 5 };
      const result = await turnOperations(store).commitInbound(commit);
      expect(result.status).toBe('queued');
      const stored = await store.getSession(KEY);
      expect(stored).toMatchObject({ label: 'new', kind: 'dm', updatedAt: T0 + 5 });
      expect(stored).not.toHaveProperty('displayName');
      expect((await store.listSessions({ label: 'new' })).map((s) => s.key)).toEqual([KEY]);
      expect(await store.listSessions({ label: 'old' })).toEqual([]);
    });

    it('counts a changed label as a patch, the begun turn as a status change and its input as a message', async () => {
      await store.putSession(makeSessionRecord(KEY, { kind: 'dm', label: 'old' }));
      const commit = inbound('r1');
      commit.session.update = { label: 'new', updatedAt: T0 + 5 };
      const result = await turnOperations(store).commitInbound(commit);
      expect(result.status).toBe('begun');
      expect((await store.readChanges(KEY, 0))?.changes).toEqual({ patch: 1, status: 1, message: 1 });
      expect((await store.getSession(KEY))?.stateVersion).toBe(3);
    });

    it('joins a transaction and rolls back with it', async () => {
      await expect(
        store.transaction(async (tx) => {
          await turnOperations(tx).commitInbound(inbound('r1'));
          throw new Error('roll back');
        }),
      ).rejects.toThrow('roll back');
      expect(await store.getSession(KEY)).toBeUndefined();
      expect(await store.getRun('r1')).toBeUndefined();
    });
  });

  describe('turn operations: endTurn', () => {
    it('appends the final message, ends the runs and the session, and marks the planned reply', async () => {
      await turnOperations(store).commitInbound(inbound('r1'));
      await store.patchSession(KEY, {
        usage: { inputTokens: 5, outputTokens: 1, totalTokens: 6 },
        estimatedCostUsd: 0.5,
      });
      const ended = await turnOperations(store).endTurn({
        sessionKey: KEY,
        finalMessage: say('the answer', 'assistant'),
        runs: [{ runId: 'r1', patch: { status: 'done', endedAt: T0 + 2, reply: 'the answer' } }],
        session: { status: 'done', endedAt: T0 + 2 },
        add: {
          usage: { inputTokens: 10, outputTokens: 2, totalTokens: 12, contextTokens: 10 },
          costUsd: 0.25,
        },
        delivery: { runId: 'r1', plan: { kind: 'reply', text: 'the answer' }, at: T0 + 3 },
      });
      const plan = { kind: 'reply', text: 'the answer', finalSeq: 2 };
      expect(ended).toMatchObject({
        session: {
          status: 'done',
          usage: { inputTokens: 15, outputTokens: 3, totalTokens: 18, contextTokens: 10 },
          estimatedCostUsd: 0.75,
        },
        runs: [{ runId: 'r1', status: 'done', reply: 'the answer' }],
        finalMessage: { seq: 2, content: 'the answer' },
        marked: plan,
        inboxWaiting: false,
        watched: false,
      });
      expect((await store.getRun('r1'))?.meta).toEqual({
        pendingDelivery: plan,
        delivery: { kind: 'reply', status: 'sending', at: T0 + 3 },
      });
      expect((await store.readTail(KEY, 5)).map((m) => m.content)).toEqual(['text of r1', 'the answer']);
    });

    it('does not mark a reply whose run has a delivery state, nor one whose session is gone', async () => {
      await store.putSession(makeSessionRecord(KEY));
      await store.createRun(makeRunRecord('r1', KEY, { meta: { delivery: { status: 'delivered' } } }));
      await store.createRun(makeRunRecord('r2', 'gone'));
      const plan = { kind: 'reply' as const, text: 'hi' };
      const settled = await turnOperations(store).endTurn({
        sessionKey: KEY,
        runs: [{ runId: 'r1', patch: { status: 'done' } }],
        session: { status: 'done' },
        delivery: { runId: 'r1', plan, at: T0 },
      });
      expect(settled.marked).toBeUndefined();
      expect((await store.getRun('r1'))?.meta).toEqual({
        delivery: { status: 'delivered' },
        pendingDelivery: plan,
      });
      const gone = await turnOperations(store).endTurn({
        sessionKey: 'gone',
        finalMessage: say('lost', 'assistant'),
        runs: [{ runId: 'r2', patch: { status: 'error', error: 'deleted' } }],
        session: { status: 'error' },
        delivery: { runId: 'r2', plan, at: T0 },
      });
      expect(gone).toMatchObject({ session: undefined, runs: [{ status: 'error' }], inboxWaiting: false });
      expect(gone.marked).toBeUndefined();
      expect(gone.finalMessage).toBeUndefined();
    });

    it('adds usage and cost as numbers add, keeps contextTokens when none is given, and plans into the meta the patch carries', async () => {
      await store.putSession(
        makeSessionRecord(KEY, {
          usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2, contextTokens: 7 },
          estimatedCostUsd: 0.1,
        }),
      );
      await store.createRun(makeRunRecord('r1', KEY, { status: 'running', meta: { stored: true } }));
      const plan = { kind: 'reply' as const, text: 'hi' };
      const ended = await turnOperations(store).endTurn({
        sessionKey: KEY,
        runs: [{ runId: 'r1', patch: { status: 'done', meta: { held: true } } }],
        session: { status: 'done' },
        add: { usage: { inputTokens: 1, outputTokens: 1, totalTokens: 0 }, costUsd: 0.2 },
        delivery: { runId: 'r1', plan, at: T0 },
      });
      const session = await store.getSession(KEY);
      expect(session?.estimatedCostUsd).toBe(0.1 + 0.2);
      expect(session?.usage).toEqual({ inputTokens: 2, outputTokens: 2, totalTokens: 4, contextTokens: 7 });
      expect(ended.session).toMatchObject({ estimatedCostUsd: 0.1 + 0.2, usage: session?.usage });
      expect((await store.getRun('r1'))?.meta).toEqual({
        held: true,
        pendingDelivery: plan,
        delivery: { kind: 'reply', status: 'sending', at: T0 },
      });
    });

    it('says whether the inbox holds entries and whether a watch of the session is due', async () => {
      await store.putSession(makeSessionRecord(KEY));
      await store.putSession(makeSessionRecord('watcher'));
      await store.createRun(makeRunRecord('r1', KEY, { status: 'running' }));
      await store.putWatch({
        watcherKey: 'watcher',
        targetKey: KEY,
        afterVersion: 0,
        id: 'w1',
        createdAt: T0,
      });
      await store.putInbox({ sessionKey: KEY, id: 'i1', message: say('later'), createdAt: T0 });
      const ended = await turnOperations(store).endTurn({
        sessionKey: KEY,
        finalMessage: say('done', 'assistant'),
        runs: [{ runId: 'r1', patch: { status: 'done' } }],
        session: { status: 'done' },
      });
      expect(ended).toMatchObject({ inboxWaiting: true, watched: true });
    });

    it("plans the reply into the patch's meta when it has one, else beside the stored meta", async () => {
      await store.putSession(makeSessionRecord(KEY));
      await store.createRun(makeRunRecord('r1', KEY, { status: 'running', meta: { stored: 1 } }));
      await store.createRun(makeRunRecord('r2', KEY, { status: 'running', meta: { stored: 2 } }));
      const plan = { kind: 'reply' as const, text: 'hi' };
      const sending = { kind: 'reply', status: 'sending', at: T0 + 5 };
      const replaced = await turnOperations(store).endTurn({
        sessionKey: KEY,
        runs: [{ runId: 'r1', patch: { status: 'done', meta: { held: true } } }],
        session: { status: 'done' },
        delivery: { runId: 'r1', plan, at: T0 + 5 },
      });
      expect(replaced.runs[0]?.meta).toEqual({ held: true, pendingDelivery: plan, delivery: sending });
      const kept = await turnOperations(store).endTurn({
        sessionKey: KEY,
        runs: [
          {
            runId: 'r2',
            patch: {
              status: 'done',
              reply: 'hi',
              usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 },
            },
          },
        ],
        session: { status: 'done' },
        delivery: { runId: 'r2', plan, at: T0 + 5 },
      });
      const r2 = { status: 'done', reply: 'hi', usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 } };
      expect(kept.runs[0]).toMatchObject({
        ...r2,
        meta: { stored: 2, pendingDelivery: plan, delivery: sending },
      });
      expect(await store.getRun('r1')).toEqual(replaced.runs[0]);
      expect(await store.getRun('r2')).toEqual(kept.runs[0]);
      expect((await store.listRuns({ sessionKey: KEY })).map((r) => r.meta)).toEqual(
        expect.arrayContaining([replaced.runs[0]?.meta, kept.runs[0]?.meta]),
      );
    });

    it('stores nothing of a turn when one of its runs is unknown (RUN_NOT_FOUND)', async () => {
      await turnOperations(store).commitInbound(inbound('r1'));
      await expect(
        turnOperations(store).endTurn({
          sessionKey: KEY,
          finalMessage: say('the answer', 'assistant'),
          runs: [
            { runId: 'r1', patch: { status: 'done' } },
            { runId: 'missing', patch: { status: 'done' } },
          ],
          session: { status: 'done' },
          delivery: { runId: 'r1', plan: { kind: 'reply', text: 'the answer' }, at: T0 },
        }),
      ).rejects.toMatchObject({ code: 'RUN_NOT_FOUND' });
      expect(await store.getRun('r1')).toMatchObject({ status: 'running' });
      expect((await store.getRun('r1'))?.meta).toBeUndefined();
      expect((await store.getSession(KEY))?.status).toBe('running');
      expect((await store.readTail(KEY, 5)).map((m) => m.content)).toEqual(['text of r1']);
    });

    it('joins a transaction and rolls back with it', async () => {
      await turnOperations(store).commitInbound(inbound('r1'));
      await expect(
        store.transaction(async (tx) => {
          const ended = await turnOperations(tx).endTurn({
            sessionKey: KEY,
            finalMessage: say('the answer', 'assistant'),
            runs: [{ runId: 'r1', patch: { status: 'done' } }],
            session: { status: 'done' },
            delivery: { runId: 'r1', plan: { kind: 'reply', text: 'the answer' }, at: T0 },
          });
          expect(await tx.getRun('r1')).toEqual(ended.runs[0]);
          throw new Error('roll back');
        }),
      ).rejects.toThrow('roll back');
      expect(await store.getRun('r1')).toMatchObject({ status: 'running' });
      expect((await store.getRun('r1'))?.meta).toBeUndefined();
      expect((await store.readTail(KEY, 5)).map((m) => m.content)).toEqual(['text of r1']);
    });
  });

  describe('turn operations: text with a NUL character', () => {
    it('carries a run whose input, reply and delivery hold a NUL through its whole turn', async () => {
      const nul = (text: string) => `${text}\u0000${text}`;
      const commit = inbound('r1');
      const run = { ...commit.run, message: nul('hello') };
      const committed = await turnOperations(store).commitInbound({
        ...commit,
        run,
        begin: {
          ...commit.begin!,
          input: say(run.message),
          run: { ...commit.begin!.run, message: run.message },
        },
      });
      expect(committed).toMatchObject({ status: 'begun', input: { content: nul('hello') } });
      const plan = { kind: 'reply' as const, text: nul('answer') };
      const ended = await turnOperations(store).endTurn({
        sessionKey: KEY,
        finalMessage: say(nul('answer'), 'assistant'),
        runs: [{ runId: 'r1', patch: { status: 'done', endedAt: T0 + 2, reply: nul('answer'), meta: {} } }],
        session: { status: 'done' },
        delivery: { runId: 'r1', plan, at: T0 + 2 },
      });
      const planned = { ...plan, finalSeq: 2 };
      expect(ended.marked).toEqual(planned);
      expect(ended.runs[0]).toMatchObject({
        message: nul('hello'),
        reply: nul('answer'),
        meta: { pendingDelivery: planned, delivery: { kind: 'reply', status: 'sending', at: T0 + 2 } },
      });
      const failed = { kind: 'reply' as const, status: 'failed' as const, error: nul('down'), at: T0 + 3 };
      await turnOperations(store).recordDeliveries([{ runId: 'r1', sessionKey: KEY, state: failed }]);
      await store.updateRun('r1', { error: nul('noted'), updatedAt: T0 + 4 });
      const stored = await store.getRun('r1');
      expect(stored).toMatchObject({
        message: nul('hello'),
        status: 'done',
        reply: nul('answer'),
        error: nul('noted'),
        updatedAt: T0 + 4,
        endedAt: T0 + 2,
        meta: { pendingDelivery: planned, delivery: failed },
      });
    });

    it('creates, begins and ends the turn of a session whose display name holds a NUL', async () => {
      const name = 'Ada\u0000Lovelace';
      const commit = inbound('r1');
      const committed = await turnOperations(store).commitInbound({
        ...commit,
        session: {
          create: makeSessionRecord(KEY, { kind: 'dm', displayName: name }),
          update: { displayName: name, updatedAt: T0 + 1 },
        },
      });
      expect(committed).toMatchObject({ status: 'begun', session: { displayName: name } });
      await turnOperations(store).endTurn({
        sessionKey: KEY,
        finalMessage: say('answer', 'assistant'),
        runs: [{ runId: 'r1', patch: { status: 'done', endedAt: T0 + 2, reply: 'answer' } }],
        session: { status: 'done', displayName: `${name}, answered` },
      });
      await turnOperations(store).commitInbound({
        ...inbound('r2', false),
        session: { ...commit.session, update: { updatedAt: T0 + 3 } },
      });
      expect(await store.getSession(KEY)).toMatchObject({
        displayName: `${name}, answered`,
        status: 'done',
        updatedAt: T0 + 3,
      });
    });
  });

  describe('turn operations: recordDeliveries', () => {
    it('records each outcome, platform id and transcript line, and skips a missing run', async () => {
      await turnOperations(store).commitInbound(inbound('r1'));
      await store.updateRun('r1', { meta: { pendingDelivery: { kind: 'reply', text: 'x' } } });
      await turnOperations(store).recordDeliveries([
        {
          runId: 'r1',
          sessionKey: KEY,
          state: { kind: 'reply', status: 'delivered', messageId: 'p-9', messageIds: ['p-9'], at: T0 + 4 },
          platformMessage: { seq: 1, id: 'p-9' },
          transcript: say('a fallback line', 'assistant'),
        },
        {
          runId: 'missing',
          sessionKey: KEY,
          state: { kind: 'reply', status: 'failed', error: 'x', at: T0 },
        },
      ]);
      expect((await store.getRun('r1'))?.meta).toEqual({
        pendingDelivery: { kind: 'reply', text: 'x' },
        delivery: { kind: 'reply', status: 'delivered', messageId: 'p-9', messageIds: ['p-9'], at: T0 + 4 },
      });
      const tail = await store.readTail(KEY, 5);
      expect(tail.map((m) => [m.content, m.platformMessageId])).toEqual([
        ['text of r1', 'p-9'],
        ['a fallback line', undefined],
      ]);
      expect(await store.getRun('missing')).toBeUndefined();
    });

    it('records the delivery of a run whose session is gone, without its transcript line', async () => {
      await store.createRun(makeRunRecord('r1', 'gone'));
      await turnOperations(store).recordDeliveries([
        {
          runId: 'r1',
          sessionKey: 'gone',
          state: { kind: 'reply', status: 'failed', error: 'no chat', at: T0 },
          transcript: say('a fallback line', 'assistant'),
        },
      ]);
      expect((await store.getRun('r1'))?.meta).toEqual({
        delivery: { kind: 'reply', status: 'failed', error: 'no chat', at: T0 },
      });
      expect(await store.getSession('gone')).toBeUndefined();
      expect(await store.readTail('gone', 5)).toEqual([]);
    });

    it("keeps the run's other fields and meta, and rolls back with a transaction it joins", async () => {
      await store.putSession(makeSessionRecord(KEY));
      const run = makeRunRecord('r1', KEY, {
        status: 'done',
        reply: 'x',
        meta: {
          kept: [1, 2],
          pendingDelivery: { kind: 'reply', text: 'x' },
          delivery: { kind: 'reply', status: 'sending', at: T0 },
        },
      });
      await store.createRun(run);
      const failed = { kind: 'reply' as const, status: 'failed' as const, error: 'down', at: T0 + 1 };
      await expect(
        store.transaction(async (tx) => {
          await turnOperations(tx).recordDeliveries([{ runId: 'r1', sessionKey: KEY, state: failed }]);
          expect((await tx.getRun('r1'))?.meta?.delivery).toEqual(failed);
          throw new Error('roll back');
        }),
      ).rejects.toThrow('roll back');
      expect(await store.getRun('r1')).toEqual(run);
      await turnOperations(store).recordDeliveries([{ runId: 'r1', sessionKey: KEY, state: failed }]);
      expect(await store.getRun('r1')).toEqual({ ...run, meta: { ...run.meta, delivery: failed } });
    });
  });
}
