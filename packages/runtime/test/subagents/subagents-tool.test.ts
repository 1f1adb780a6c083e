import type { ModelRequest } from '@colloquy/core/model';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../support/harness.js';
import {
  allOutbox,
  announcesIn,
  call,
  isSubagent,
  MAIN,
  type SubagentHarness,
  type SubagentHarnessOptions,
  seedMain,
  startSubagentHarness,
  userTexts,
} from './subagents-fixture.js';

let h: SubagentHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

type Spawned = { status: string; runId: string; childSessionKey: string };
type Row = {
  index: number;
  sessionKey: string;
  label?: string;
  status: string;
  active: boolean;
  runId?: string;
  model?: string;
  depth: number;
  spawnedBy: string;
  runtimeMs?: number;
  tokens?: { input: number; output: number; total: number };
};

const taskOf = (request: ModelRequest) => userTexts(request)[0] ?? '';

async function boot(options: Partial<SubagentHarnessOptions> & Pick<SubagentHarnessOptions, 'script'>) {
  h = await startSubagentHarness({
    config: { agents: { defaults: { subagents: { maxSpawnDepth: 2 } } } },
    ...options,
  });
  await seedMain(h.store);
  return h;
}

const spawn = async (harness: SubagentHarness, args: Record<string, unknown>, requester = MAIN) =>
  call<Spawned>((await harness.tools(requester)).sessions_spawn, args);
const subagents = async <T = Record<string, unknown>>(
  harness: SubagentHarness,
  args: unknown,
  requester = MAIN,
) => call<T>((await harness.tools(requester)).subagents, args);

describe('subagents list', () => {
  it('shows active and recent sub-agents, with their own, in spawn order with status, model, runtime and tokens', async () => {
    const harness = await boot({
      script: (r) => (taskOf(r).includes('slow') ? { text: 'slow', delayMs: 3000 } : 'quick answer'),
    });
    const quick = await spawn(harness, { task: 'quick', label: 'quick' });
    await waitFor(
      async () => (await harness.store.getOutbox(quick.childSessionKey, quick.runId))?.status === 'delivered',
    );
    const slow = await spawn(harness, { task: 'slow', label: 'slow', model: 'scripted/other' });
    const nested = await spawn(harness, { task: 'slow too', label: 'nested' }, slow.childSessionKey);
    await waitFor(async () => (await harness.store.getRun(nested.runId))?.status === 'running');

    const list = await subagents<{ status: string; count: number; active: number; subagents: Row[] }>(
      harness,
      {
        action: 'list',
      },
    );
    expect(list).toMatchObject({ status: 'ok', count: 3, active: 2 });
    const [first, second, third] = list.subagents;
    expect(first).toMatchObject({
      index: 1,
      sessionKey: quick.childSessionKey,
      label: 'quick',
      status: 'done',
      active: false,
      runId: quick.runId,
      model: 'scripted/test',
      depth: 1,
      spawnedBy: 'main',
      runtimeMs: expect.any(Number),
      tokens: { input: expect.any(Number), output: expect.any(Number), total: expect.any(Number) },
    });
    expect(first!.tokens!.total).toBeGreaterThan(0);
    expect(second).toMatchObject({
      index: 2,
      label: 'slow',
      status: 'running',
      active: true,
      model: 'scripted/other',
    });
    expect(third).toMatchObject({ index: 3, label: 'nested', depth: 2, spawnedBy: slow.childSessionKey });
    // A child lists only its own tree.
    const own = await subagents<{ subagents: Row[] }>(harness, { action: 'list' }, slow.childSessionKey);
    expect(own.subagents.map((r) => r.label)).toEqual(['nested']);
  });
});

describe('subagents steer', () => {
  it('injects a message that the running child takes at its next step, and its result says so', async () => {
    const harness = await boot({
      script: (r) => {
        if (!isSubagent(r)) return 'ok';
        if (r.messages.at(-1)?.role !== 'toolResult')
          return { toolCalls: [{ name: 'wait', arguments: { ms: 300 } }] };
        return `final after: ${userTexts(r).join(' | ')}`;
      },
    });
    const child = await spawn(harness, { task: 'Write a poem', label: 'poet' });
    await harness.model.waitForRequests(1);
    const steered = await subagents<{ status: string; runId: string }>(harness, {
      action: 'steer',
      target: 'poet',
      message: 'Make it about the sea',
    });
    expect(steered).toEqual({
      status: 'ok',
      action: 'steer',
      sessionKey: child.childSessionKey,
      runId: child.runId,
    });
    await waitFor(
      async () => (await harness.store.getOutbox(child.childSessionKey, child.runId))?.status === 'delivered',
    );
    const second = harness.model.requests[1]!;
    expect(userTexts(second).at(-1)).toBe(
      `[Message from session ${MAIN} via subagents; it is not from the human user]\nMake it about the sea`,
    );
    const text = (
      (await harness.store.getOutbox(child.childSessionKey, child.runId))!.payload as { text: string }
    ).text;
    expect(text).toContain('Make it about the sea');
    expect(await allOutbox(harness.store)).toHaveLength(1);
    expect(await harness.store.listInbox(child.childSessionKey)).toEqual([]);
  });

  it('gives a message that arrives during the last step to the next turn, announced on its own', async () => {
    const harness = await boot({
      script: (r) => (isSubagent(r) ? { text: `saw: ${userTexts(r).at(-1)}`, delayMs: 200 } : 'ok'),
    });
    const child = await spawn(harness, { task: 'first task' });
    await harness.model.waitForRequests(1);
    await subagents(harness, { action: 'steer', target: child.childSessionKey, message: 'one more thing' });
    await waitFor(
      async () =>
        (await allOutbox(harness.store)).length === 2 &&
        (await allOutbox(harness.store)).every((r) => r.status === 'delivered'),
    );
    const texts = (await allOutbox(harness.store)).map((row) => (row.payload as { result: string }).result);
    expect(texts).toEqual(
      expect.arrayContaining([
        expect.stringContaining('first task'),
        expect.stringContaining('one more thing'),
      ]),
    );
  });

  it('refuses to steer a finished child, or without a message', async () => {
    const harness = await boot({ script: () => 'done' });
    const child = await spawn(harness, { task: 'x' });
    await waitFor(
      async () => (await harness.store.getOutbox(child.childSessionKey, child.runId))?.status === 'delivered',
    );
    expect(await subagents(harness, { action: 'steer', target: 1, message: 'hey' })).toEqual({
      status: 'error',
      error: expect.stringContaining('is not running'),
    });
    expect(await subagents(harness, { action: 'steer', target: 1 })).toEqual({
      status: 'error',
      error: expect.stringContaining('steer needs a message'),
    });
  });
});

describe('subagents kill', () => {
  it('kills a child and its own sub-agents, and announces every killed run with Status: killed', async () => {
    const harness = await boot({
      script: (r) => (isSubagent(r) ? { text: 'never', delayMs: 10_000 } : 'ok'),
    });
    const child = await spawn(harness, { task: 'parent work', label: 'boss' });
    const grandchild = await spawn(harness, { task: 'nested work' }, child.childSessionKey);
    await waitFor(async () => (await harness.store.getRun(grandchild.runId))?.status === 'running');

    const killed = await subagents<{
      status: string;
      killed: { sessionKey: string; runIds: string[] }[];
      count: number;
    }>(harness, { action: 'kill', target: child.runId });
    expect(killed).toMatchObject({
      status: 'ok',
      action: 'kill',
      sessionKey: child.childSessionKey,
      count: 2,
    });
    // The target first, then the sessions below it.
    expect(killed.killed).toEqual([
      { sessionKey: child.childSessionKey, runIds: [child.runId] },
      { sessionKey: grandchild.childSessionKey, runIds: [grandchild.runId] },
    ]);
    const store = harness.store;
    expect((await store.getRun(child.runId))?.status).toBe('killed');
    expect((await store.getRun(grandchild.runId))?.status).toBe('killed');
    await waitFor(
      async () =>
        (await allOutbox(store)).length === 2 &&
        (await allOutbox(store)).every((row) => row.status === 'delivered'),
    );
    for (const row of await allOutbox(store))
      expect((row.payload as { text: string }).text).toContain('Status: killed');
    await waitFor(async () => (await announcesIn(store, MAIN)).length === 1);
    expect((await announcesIn(store, MAIN))[0]!.text).toContain('Status: killed');
    // The killed child keeps its grandchild's announce in its inbox but is not woken by it (a drain
    // that delivered everything has decided about the wake).
    await h!.runtime.subagents.drain({ force: true });
    expect((await store.listInbox(child.childSessionKey)).map((e) => e.id)).toEqual([
      `announce:${grandchild.childSessionKey}:${grandchild.runId}`,
    ]);
    expect(await store.listRuns({ sessionKey: child.childSessionKey })).toHaveLength(1);
  });

  it('announces a run killed while it still waited in the queue', async () => {
    const harness = await boot({
      config: { runtime: { lanes: { subagent: 1 } } },
      script: (r) => (isSubagent(r) ? { text: 'slow', delayMs: 10_000 } : 'ok'),
    });
    await spawn(harness, { task: 'first' });
    const waiting = await spawn(harness, { task: 'second', label: 'second' });
    expect((await harness.store.getRun(waiting.runId))?.status).toBe('queued');
    const killed = await subagents<{ count: number }>(harness, { action: 'kill', target: 'second' });
    expect(killed.count).toBe(1);
    await waitFor(
      async () =>
        (await harness.store.getOutbox(waiting.childSessionKey, waiting.runId))?.status === 'delivered',
    );
    const payload = (await harness.store.getOutbox(waiting.childSessionKey, waiting.runId))!.payload as {
      text: string;
    };
    expect(payload.text).toContain('Status: killed');
  });

  it('acts only on the caller own tree, and names what it cannot find', async () => {
    const harness = await boot({ script: (r) => (isSubagent(r) ? { text: 'slow', delayMs: 3000 } : 'ok') });
    const other = 'agent:main:memory:group:g1';
    await harness.store.putSession({
      ...(await harness.store.getSession(MAIN))!,
      key: other,
      sessionId: 'sid-g1',
      kind: 'group',
    });
    const theirs = await spawn(harness, { task: 'not yours', label: 'dup' }, other);
    await spawn(harness, { task: 'mine', label: 'dup' });
    await spawn(harness, { task: 'mine too', label: 'dup' });
    const notMine = await subagents(harness, { action: 'kill', target: theirs.childSessionKey });
    expect(notMine).toEqual({
      status: 'forbidden',
      error: expect.stringContaining('only reaches sessions this session spawned'),
    });
    expect(JSON.stringify(notMine)).not.toContain(theirs.childSessionKey);
    expect(await subagents(harness, { action: 'kill', target: MAIN })).toMatchObject({ status: 'forbidden' });
    expect(await subagents(harness, { action: 'kill', target: 'dup' })).toEqual({
      status: 'error',
      error: expect.stringContaining('2 sub-agents are labelled "dup"'),
    });
    expect(await subagents(harness, { action: 'kill', target: 7 })).toEqual({
      status: 'error',
      error: expect.stringContaining('no sub-agent #7'),
    });
    expect(await subagents(harness, { action: 'kill', target: 'agent:main:subagent:nope' })).toEqual(notMine);
    expect(await subagents(harness, { action: 'kill' })).toEqual({
      status: 'error',
      error: expect.stringContaining('kill needs a target'),
    });
    expect((await harness.store.getRun(theirs.runId))?.status).not.toBe('killed');
  });
});
