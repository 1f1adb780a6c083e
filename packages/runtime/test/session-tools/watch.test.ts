import { createSessionTools, resolveConfig, type StoredMessage } from '@colloquy/core';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { STORE_KINDS, waitFor } from '../support/harness.js';
import { expectedVisible, type Visibility } from './expected-visibility.js';
import { call, seed, startToolsHarness, type ToolsHarness } from './tools-fixture.js';

const A = 'agent:main:main';
const B = 'agent:main:memory:group:b';
const SENTINEL = 'agent:main:memory:group:sentinel';
const SEES_ALL = { tools: { sessions: { visibility: 'agent' as const } } };
const NO_PING_PONG = { ...SEES_ALL, session: { agentToAgent: { maxPingPongTurns: 0 } } };

let h: ToolsHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** The watch notices in a session's transcript. */
async function notices(key: string): Promise<StoredMessage[]> {
  const tail = await h!.store.readTail(key, 200);
  return tail.filter((m) => m.details?.watch !== undefined);
}

/** A's model requests that carry a watch notice. */
const requestsWithNotice = () =>
  h!.model.requests.filter((r) =>
    r.messages.some((m) => m.role === 'user' && String(m.content).includes('which you watch')),
  );

/** True once every run of the session has ended (its wake turns included). */
const runsEnded = async (key: string) =>
  (await h!.store.listRuns({ sessionKey: key })).every((r) => r.endedAt);

/**
 * Sets a watch of `B` by a third session, due on B's next change. The sweep that fires it deletes
 * every due watch of B in the same transaction, so its end proves B's change was swept: the
 * positive event a "no more notices" check waits for.
 *
 * @returns a check that holds once the sentinel watch has fired
 */
async function watchBWithSentinel(): Promise<() => Promise<boolean>> {
  await seed(h!.store, SENTINEL);
  await h!.store.putWatch({
    watcherKey: SENTINEL,
    targetKey: B,
    afterVersion: (await h!.store.getSession(B))!.stateVersion!,
    id: 'sentinel',
    createdAt: Date.now(),
  });
  return async () => (await h!.store.listWatches({ watcherKey: SENTINEL })).length === 0;
}

describe.each(STORE_KINDS)('sessions_send with watch through the runtime (%s store)', (storeKind) => {
  it('gives the watcher one coalesced notice after the target replied, wakes it once, and then stops', async () => {
    h = await startToolsHarness(NO_PING_PONG, {}, { storeKind });
    await seed(h.store, A);
    await seed(h.store, B);
    const sent = await call<{ status: string; runId: string; watching?: { sinceVersion: number } }>(
      h.tools(A).sessions_send,
      { sessionKey: B, message: 'ping', timeoutSeconds: 0, watch: true },
    );
    expect(sent).toMatchObject({ status: 'accepted', watching: { sinceVersion: 0 } });
    await waitFor(async () => (await notices(A)).length > 0, 8000, 'the watch notice in A');
    await waitFor(() => requestsWithNotice().length > 0, 5000, 'the wake turn of A');
    await waitFor(() => runsEnded(B), 5000, 'the end of B’s runs');
    // A second notice or wake could only come from the watch firing twice; the transaction that
    // puts the notice deletes the watch, so once A's wake turn is over, both are settled.
    await waitFor(() => runsEnded(A), 5000, 'the end of A’s wake turn');

    const [notice, ...more] = await notices(A);
    expect(more).toEqual([]);
    expect(notice!.content).toContain(`Session ${B}, which you watch, changed`);
    const watch = notice!.details!.watch as { changes: Record<string, number>; fromVersion: number };
    expect(watch.fromVersion).toBe(0);
    // The turn's input and reply, and its run's start and end, in one notice.
    expect(watch.changes.message).toBeGreaterThanOrEqual(2);
    expect(watch.changes.status).toBeGreaterThanOrEqual(2);
    expect(JSON.stringify(notice)).not.toContain('echo: ping');
    const wakes = (await h.store.listRuns({ sessionKey: A })).filter((r) => r.meta?.wake === true);
    expect(wakes).toHaveLength(1);
    expect(requestsWithNotice()).toHaveLength(1);
    expect(await h.store.listWatches()).toEqual([]);

    // A later change of B notifies nobody: the watch was used up.
    const sentinelFired = await watchBWithSentinel();
    await h.store.appendMessages(B, [{ role: 'user', content: 'more', timestamp: Date.now() }]);
    await h.runtime.gateway.call('sessions.patch', { key: B, patch: { label: 'renamed' } });
    await waitFor(sentinelFired, 5000, 'the sweep of B’s change (the sentinel watch fired)');
    expect(await notices(A)).toHaveLength(1);
    expect(await h.store.listInbox(A)).toEqual([]);
  });
});

describe('watching through the runtime', () => {
  it('sends no notice while the target has not changed, and one once a patch changes it', async () => {
    h = await startToolsHarness(SEES_ALL);
    await seed(h.store, A);
    await seed(h.store, B);
    // Registered straight through the gateway: A watches B from B's version now.
    const queued = await h.runtime.gateway.call('agent', {
      sessionKey: B,
      message: 'hello',
      deliver: false,
      watchBy: A,
    });
    expect(queued.watching).toEqual({ sinceVersion: 0 });
    await waitFor(async () => (await notices(A)).length === 1, 8000, 'the first notice');
    await waitFor(() => runsEnded(A), 5000, 'the end of A’s wake turn');
    // A new watch from now on: nothing happens while B stays unchanged ...
    await h.store.putWatch({
      watcherKey: A,
      targetKey: B,
      afterVersion: (await h.store.getSession(B))!.stateVersion!,
      id: 'manual',
      createdAt: Date.now(),
    });
    await call(h.tools(A).session_status, { sessionKey: B, changesSince: 0 });
    // Not due (B has no change after the watch's version), so no sweep can fire it.
    expect(await h.store.listWatches({ due: true })).toEqual([]);
    expect(await notices(A)).toHaveLength(1);
    // ... and a settings patch (B at rest) fires it, with the one change counted.
    await h.runtime.gateway.call('sessions.patch', { key: B, patch: { label: 'x' } });
    await waitFor(async () => (await notices(A)).length === 2, 5000, 'the second notice');
    const second = (await notices(A))[1]!.details!.watch as { changes: Record<string, number> };
    expect(second.changes).toEqual({ message: 0, status: 0, patch: 1 });
  });

  it('lets a watcher yield on its watch and wakes it saying the watched session changed', async () => {
    h = await startToolsHarness(NO_PING_PONG, {
      reply: (text, _system, lastRole) => {
        if (text === 'go' && lastRole === 'user') {
          return {
            toolCalls: [
              {
                name: 'sessions_send',
                arguments: { sessionKey: B, message: 'ping', timeoutSeconds: 0, watch: true },
              },
            ],
          };
        }
        if (text === 'go')
          return { toolCalls: [{ name: 'sessions_yield', arguments: { reason: 'B answers' } }] };
        if (text.includes('which you watch')) return 'B is done';
        // B takes a while, so A yields while its watch is still pending.
        return { text: `echo: ${text}`, delayMs: 300 };
      },
    });
    await seed(h.store, A);
    await seed(h.store, B);
    await h.runtime.gateway.call('agent', { sessionKey: A, message: 'go' });
    await waitFor(
      async () =>
        (await h!.store.readTail(A, 50)).some(
          (m) => m.content === 'B is done' || JSON.stringify(m.content).includes('B is done'),
        ),
      8000,
      'the wake turn of A',
    );
    const transcript = await h.store.readTail(A, 50);
    const yielded = transcript.find((m) => m.role === 'toolResult' && m.toolName === 'sessions_yield');
    const content = yielded?.content;
    const text = typeof content === 'string' ? content : content?.[0]?.type === 'text' ? content[0].text : '';
    expect(JSON.parse(text)).toMatchObject({ status: 'yielded', pending: { watches: 1 } });
    const wake = transcript.find((m) => String(m.content).startsWith('You yielded'));
    expect(String(wake?.content)).toContain(`woke because: watched session ${B} changed`);
  });

  it('fires a watch that came due while no runtime was there, on start', async () => {
    h = await startToolsHarness(SEES_ALL, {}, { start: false });
    await seed(h.store, A);
    await seed(h.store, B);
    await h.store.putWatch({ watcherKey: A, targetKey: B, afterVersion: 0, id: 'left', createdAt: 1 });
    await h.store.appendMessages(B, [{ role: 'user', content: 'while down', timestamp: 1 }]);
    await h.runtime.start();
    await waitFor(async () => (await notices(A)).length === 1, 5000, 'the notice after start');
    expect(await h.store.listWatches()).toEqual([]);
  });

  it('reports stateVersion and changesSince in session_status, and bad arguments with a sentence', async () => {
    h = await startToolsHarness(SEES_ALL);
    await seed(h.store, A);
    await seed(h.store, B);
    const tools = h.tools(A);
    const before = await call<{ stateVersion: number; changes?: unknown }>(tools.session_status, {
      sessionKey: B,
    });
    expect(before.stateVersion).toBe(0);
    expect(before.changes).toBeUndefined();
    await h.store.appendMessages(B, [
      { role: 'user', content: 'secret plans', timestamp: 1 },
      { role: 'assistant', content: 'noted', timestamp: 2 },
    ]);
    await h.runtime.gateway.call('sessions.patch', { key: B, patch: { label: 'team' } });
    const after = await call<{ stateVersion: number; changes: unknown }>(tools.session_status, {
      sessionKey: B,
      changesSince: 1,
    });
    expect(after.stateVersion).toBe(3);
    expect(after.changes).toEqual({
      fromVersion: 1,
      toVersion: 3,
      changes: { message: 1, status: 0, patch: 1 },
      truncated: false,
    });
    expect(JSON.stringify(after)).not.toContain('secret plans');
    for (const changesSince of [-1, 1.5, 'x', null]) {
      const bad = await call<{ status: string; error: string }>(tools.session_status, {
        sessionKey: B,
        changesSince,
      });
      expect(bad.status).toBe('error');
      expect(bad.error).toMatch(/changesSince/);
    }
    const ahead = await call<{ status: string; error: string }>(tools.session_status, {
      sessionKey: B,
      changesSince: 9,
    });
    expect(ahead).toEqual({
      status: 'error',
      error: expect.stringMatching(/changesSince 9 is ahead of this session's stateVersion 3/),
    });
    const badWatch = await call<{ status: string; error: string }>(tools.sessions_send, {
      sessionKey: B,
      message: 'x',
      watch: 'yes',
    });
    expect(badWatch.status).toBe('error');
    expect(badWatch.error).toMatch(/watch/);
    // The gateway says the same over the wire.
    await expect(
      h.runtime.gateway.call('session.status', { key: B, changesSince: -2 }),
    ).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
  });

  it('refuses a watch of a session the caller may not see, with the send, storing nothing', async () => {
    h = await startToolsHarness({ tools: { sessions: { visibility: 'tree' } } });
    await seed(h.store, A);
    await seed(h.store, B);
    const refused = await call<{ status: string; error: string }>(h.tools(A).sessions_send, {
      sessionKey: B,
      message: 'let me watch you',
      timeoutSeconds: 0,
      watch: true,
    });
    expect(refused.status).toBe('forbidden');
    expect(refused.error).toContain('tools.sessions.visibility');
    expect(await h.store.listWatches()).toEqual([]);
    expect(await h.store.listRuns({ sessionKey: B })).toEqual([]);
  });
});

/** The sessions of the property below, as in the search-visibility property. */
const KEYS = {
  self: 'agent:main:main',
  child: 'agent:main:subagent:w-child',
  sameAgent: 'agent:main:telegram:group:w-team',
  otherAllowed: 'agent:ops:main',
  otherDenied: 'agent:sec:main',
} as const;
type Target = keyof typeof KEYS;
const TARGETS = Object.keys(KEYS) as Target[];

describe('session_status with changesSince never reveals a session the guard refuses', () => {
  it('answers a hidden target exactly as a missing one, whatever the version asked for', async () => {
    h = await startToolsHarness();
    for (const target of TARGETS) await seed(h.store, KEYS[target]);
    await h.store.patchSession(KEYS.child, { spawnedBy: KEYS.self, spawnDepth: 1 });
    for (const target of TARGETS) {
      await h.store.appendMessages(KEYS[target], [{ role: 'user', content: `tag-${target}`, timestamp: 1 }]);
    }
    const gateway = h.runtime.gateway;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<Visibility>('self', 'tree', 'agent', 'all'),
        fc.boolean(),
        fc.constantFrom(...TARGETS),
        fc.integer({ min: 0, max: 4 }),
        async (visibility, sandboxed, target, changesSince) => {
          const config = resolveConfig({
            tools: { sessions: { visibility }, agentToAgent: { enabled: true, allow: ['main', 'ops'] } },
          });
          const tools = Object.fromEntries(
            createSessionTools({ requesterKey: KEYS.self, agentId: 'main', sandboxed, config, gateway }).map(
              (t) => [t.name, t],
            ),
          );
          const status = await call<Record<string, unknown>>(tools.session_status, {
            sessionKey: KEYS[target],
            changesSince,
          });
          if (expectedVisible(visibility, sandboxed, target)) {
            expect(status.status).not.toBe('forbidden');
            return;
          }
          const missing = await call<Record<string, unknown>>(tools.session_status, {
            sessionKey: KEYS[target].replace(/:[^:]+$/, ':no-such-session'),
            changesSince,
          });
          expect(status).toEqual(missing);
          expect(status.status).toBe('forbidden');
          expect(JSON.stringify(status)).not.toMatch(/stateVersion|changes"|tag-/);
          expect(JSON.stringify(status)).not.toContain(KEYS[target]);
        },
      ),
      { numRuns: 80 },
    );
  });
});
