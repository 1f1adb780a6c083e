import type { ModelRequest } from '@colloquy/core/model';
import type { Store } from '@colloquy/core/store';
import { afterEach, describe, expect, it } from 'vitest';
import { makeStore, STORE_KINDS, type StoreKind, waitFor } from '../support/harness.js';
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

const CHILD_TASK = 'child work';
const GRANDCHILD_TASK = 'grandchild work';
/** The task a sub-agent's request carries (the last line of its first message). */
const taskOf = (request: ModelRequest) => userTexts(request)[0]?.split('\n').at(-1);
const isChild = (request: ModelRequest) => isSubagent(request) && taskOf(request) === CHILD_TASK;

/**
 * C spawns G, then yields until G reports (or `timeoutSeconds` pass); G takes 10 s. Should C ever
 * wake, it would spawn again. The parent answers whatever reaches it.
 */
const scriptYielding = (timeoutSeconds: number) => (request: ModelRequest) => {
  if (!isSubagent(request)) return 'noted';
  if (taskOf(request) === GRANDCHILD_TASK) return { text: 'never', delayMs: 10_000 };
  if (userTexts(request).some((text) => text.startsWith('You yielded'))) {
    return { toolCalls: [{ name: 'sessions_spawn', arguments: { task: 'a replacement' } }] };
  }
  const tail = request.messages.at(-1);
  if (tail?.role === 'toolResult' && tail.toolName === 'sessions_spawn') {
    return {
      toolCalls: [
        {
          name: 'sessions_yield',
          arguments: { reason: 'the grandchild', timeoutSeconds },
        },
      ],
    };
  }
  return { toolCalls: [{ name: 'sessions_spawn', arguments: { task: GRANDCHILD_TASK } }] };
};

const config = {
  agents: { defaults: { subagents: { maxSpawnDepth: 2 } } },
  tools: { subagents: { tools: { allow: ['sessions_spawn', 'sessions_yield'] } } },
};

interface Tree {
  child: string;
  grandchild: string;
  grandchildRunId: string;
  /** Epoch ms at which C's yield times out. */
  deadline: number;
}

/** Spawns C from main and waits until C has spawned G and yielded (its turn over, G running). */
async function spawnAndYield(harness: SubagentHarness): Promise<Tree> {
  const tools = await harness.tools(MAIN);
  const spawned = await call<{ childSessionKey: string; runId: string }>(tools.sessions_spawn, {
    task: CHILD_TASK,
    label: 'C',
  });
  const child = spawned.childSessionKey;
  await waitFor(
    async () =>
      (await harness.store.getSession(child))?.meta?.yield !== undefined &&
      (await harness.store.getRun(spawned.runId))?.status === 'done',
    3000,
    'C to yield',
  );
  const { deadline } = (await harness.store.getSession(child))!.meta!.yield as { deadline: number };
  const [grandchildRun] = await harness.store.listRuns({ spawnedBy: child });
  await waitFor(
    async () => (await harness.store.getRun(grandchildRun!.runId))?.status === 'running',
    3000,
    'G to run',
  );
  return { child, grandchild: grandchildRun!.sessionKey, grandchildRunId: grandchildRun!.runId, deadline };
}

type KillResult = {
  status: string;
  count: number;
  killed: { sessionKey: string; runIds: string[] }[];
};

/** The parent kills C with `subagents kill`. */
async function killChild(harness: SubagentHarness): Promise<KillResult> {
  return call<KillResult>((await harness.tools(MAIN)).subagents, { action: 'kill', target: 'C' });
}

/** The `Status: killed` announces of each child session, from the outbox (whatever their state). */
async function killedAnnounces(store: Store): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const row of await allOutbox(store)) {
    if ((row.payload as { status?: string }).status !== 'killed') continue;
    counts[row.childSessionKey] = (counts[row.childSessionKey] ?? 0) + 1;
  }
  return counts;
}

/**
 * What a kill of the yielded C must leave: both killed and listed, C's yield over, each announced
 * once with Status: killed, and C never woken again (after the yield's deadline passed too).
 */
async function expectKilledForGood(
  harness: SubagentHarness,
  tree: Tree,
  killed: KillResult,
  childRequests: number,
): Promise<void> {
  expect(killed).toMatchObject({ status: 'ok', count: 2 });
  expect(killed.killed).toEqual([
    { sessionKey: tree.child, runIds: [expect.any(String)] },
    { sessionKey: tree.grandchild, runIds: [tree.grandchildRunId] },
  ]);
  const childKilledRun = killed.killed[0]!.runIds[0]!;
  const store = harness.store;
  expect(await store.getRun(childKilledRun)).toMatchObject({ status: 'killed', sessionKey: tree.child });
  expect(await store.getRun(tree.grandchildRunId)).toMatchObject({ status: 'killed' });
  const session = await store.getSession(tree.child);
  expect(session?.meta?.yield).toBeUndefined();
  expect(session).toMatchObject({ status: 'killed', abortedLastRun: true });

  await waitFor(
    async () => (await allOutbox(store)).every((row) => row.status !== 'pending'),
    4000,
    'the announces to be delivered',
  );
  await quiesce(harness);
  // Past the yield's deadline: a timer left armed would wake C now.
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, tree.deadline - Date.now()) + 300));
  await harness.runtime.subagents.drain({ force: true });

  expect(await killedAnnounces(store)).toEqual({ [tree.child]: 1, [tree.grandchild]: 1 });
  const toMain = (await announcesIn(store, MAIN)).filter((a) => a.runId === childKilledRun);
  expect(toMain).toHaveLength(1);
  expect(toMain[0]!.text).toContain('Status: killed');
  // G's killed announce reached C's inbox, and C was not woken by it (nor by anything else).
  expect((await store.listInbox(tree.child)).map((entry) => entry.id)).toEqual([
    `announce:${tree.grandchild}:${tree.grandchildRunId}`,
  ]);
  expect(await harness.runtime.wake(tree.child)).toBeUndefined();
  const runs = await store.listRuns({ sessionKey: tree.child });
  expect(runs.map((run) => run.status).sort()).toEqual(['done', 'killed']);
  expect(harness.model.requests.filter(isChild)).toHaveLength(childRequests);
  expect(await store.listRuns({ spawnedBy: tree.child })).toHaveLength(1);
}

describe.each(STORE_KINDS)('subagents kill of a yielded sub-agent (%s store)', (storeKind) => {
  it('ends its yield, lists and announces it killed with its own sub-agent, and never wakes it', async () => {
    h = await startSubagentHarness({ storeKind, config, script: scriptYielding(1) });
    await seedMain(h.store);
    const tree = await spawnAndYield(h);
    const killed = await killChild(h);
    // C called the model twice: to spawn G, then to yield.
    await expectKilledForGood(h, tree, killed, 2);
  });
});

describe.each(['sqlite', 'postgres'] satisfies StoreKind[])(
  'subagents kill of a yield that survived a restart (%s store)',
  (storeKind) => {
    it('ends the stored yield and its re-armed timer, and the killed sub-agent stays asleep after another restart', async () => {
      const { store, file, cleanup } = await makeStore(storeKind);
      // Time for a restart before the kill, which must meet the yield still stored.
      const script = scriptYielding(4);
      const restart = async () => {
        await h!.close();
        h = await startSubagentHarness({ store: (await makeStore(storeKind, file)).store, config, script });
      };
      try {
        h = await startSubagentHarness({ store, config, script });
        await seedMain(h.store);
        const tree = await spawnAndYield(h);
        await restart();
        await waitFor(
          async () => (await h!.store.getRun(tree.grandchildRunId))?.status === 'running',
          3000,
          'G to run again',
        );
        // The yield is still stored, its deadline not yet passed: the kill meets the restored yield.
        expect((await h.store.getSession(tree.child))?.meta?.yield).toBeDefined();
        const killed = await killChild(h);
        await expectKilledForGood(h, tree, killed, 0);
        // The start wakes sessions with unread inbox entries (C's holds G's announce): give it time.
        await restart();
        await h.runtime.subagents.drain({ force: true });
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(await h.runtime.wake(tree.child)).toBeUndefined();
        expect(h.model.requests.filter(isChild)).toHaveLength(0);
        expect((await h.store.listRuns({ sessionKey: tree.child })).map((run) => run.status).sort()).toEqual([
          'done',
          'killed',
        ]);
      } finally {
        await h?.close();
        h = undefined;
        cleanup();
      }
    });
  },
);
