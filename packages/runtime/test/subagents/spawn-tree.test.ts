import { isColloquyError } from '@colloquy/core';
import type { SessionsTreeResult, SpawnTreeNode } from '@colloquy/core/gateway';
import type { ModelRequest } from '@colloquy/core/model';
import { afterEach, describe, expect, it } from 'vitest';
import { STORE_KINDS, waitFor } from '../support/harness.js';
import {
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

const SECRET = 'sk-ant-api03-abcdefghijklmnopqrstuvwxyz';
const taskOf = (request: ModelRequest) => userTexts(request)[0]?.split('\n').at(-1);

/** `echo` calls echo then answers; `fail` fails with a secret in its error; `slow` waits 30 s in a tool. */
const script = (request: ModelRequest) => {
  if (!isSubagent(request)) return 'noted';
  const tail = request.messages.at(-1);
  switch (taskOf(request)) {
    case 'echo':
      return tail?.role === 'toolResult'
        ? 'echoed'
        : { toolCalls: [{ name: 'echo', arguments: { text: 'hi' } }] };
    case 'fail':
      return { error: { code: 'MODEL_ERROR' as const, message: `the model refused (key ${SECRET})` } };
    default:
      return { toolCalls: [{ name: 'wait', arguments: { ms: 30_000 } }] };
  }
};

const config = { config: { tools: { subagents: { tools: { allow: ['echo', 'wait'] } } } } };

async function spawn(task: string, label: string): Promise<string> {
  const tools = await h!.tools(MAIN);
  const spawned = await call<{ childSessionKey: string }>(tools.sessions_spawn, { task, label });
  return spawned.childSessionKey;
}

const nodeOf = (tree: SessionsTreeResult, label: string): SpawnTreeNode =>
  tree.nodes.find((node) => node.label === label)!;

describe.each(STORE_KINDS)('sessions.tree (%s store)', (storeKind) => {
  it('returns the root and its children with runs, tool calls, redacted errors and announces', async () => {
    h = await startSubagentHarness({ storeKind, script, ...config });
    await seedMain(h.store);
    const echo = await spawn('echo', 'E');
    await spawn('fail', 'F');
    const slow = await spawn('slow', 'S');
    await waitFor(
      async () => (await h!.store.readTail(slow, 10)).some((m) => m.role === 'assistant'),
      3000,
      'S to call wait',
    );
    await waitFor(
      async () =>
        (await h!.store.listRuns({ spawnedBy: MAIN })).filter((run) => run.status === 'running').length === 1,
      3000,
      'E and F to end',
    );

    const live = await h.runtime.gateway.call('sessions.tree', { key: 'main' });
    expect(live.rootKey).toBe(MAIN);
    expect(live.truncated).toBe(false);
    expect(live.nodes.map((node) => [node.label, node.depth, node.parentKey])).toEqual([
      [undefined, 0, undefined],
      ['E', 1, MAIN],
      ['F', 1, MAIN],
      ['S', 1, MAIN],
    ]);
    const running = nodeOf(live, 'S');
    expect(running.status).toBe('running');
    expect(running.runs[0]!.status).toBe('running');
    expect(running.runs[0]!.durationMs).toBeGreaterThanOrEqual(0);
    expect(running.runs[0]!.toolCalls).toEqual([
      expect.objectContaining({ name: 'wait', outcome: 'running' }),
    ]);

    const echoRun = nodeOf(live, 'E').runs[0]!;
    expect(echoRun.status).toBe('done');
    expect(echoRun.durationMs).toBe(echoRun.endedAt! - echoRun.startedAt!);
    expect(echoRun.usage?.totalTokens).toBeGreaterThan(0);
    expect(echoRun.toolCalls).toEqual([expect.objectContaining({ name: 'echo', outcome: 'ok' })]);
    const [echoCall] = echoRun.toolCalls;
    expect(echoCall!.startedAt).toBeGreaterThanOrEqual(echoRun.startedAt!);
    expect(echoCall!.endedAt).toBeGreaterThanOrEqual(echoCall!.startedAt);

    const failed = nodeOf(live, 'F');
    expect(failed.status).toBe('error');
    expect(failed.runs[0]!.error).toContain('the model refused');
    expect(failed.runs[0]!.error).not.toContain(SECRET);
    expect(JSON.stringify(live)).not.toContain(SECRET);

    await h.runtime.gateway.call('agent.abort', { sessionKey: slow });
    await quiesce(h);
    const settled = await h.runtime.gateway.call('sessions.tree', { key: MAIN });
    const killed = nodeOf(settled, 'S').runs[0]!;
    expect(killed.status).toBe('killed');
    expect(killed.toolCalls).toEqual([expect.objectContaining({ name: 'wait', outcome: 'unfinished' })]);
    for (const label of ['E', 'F', 'S']) {
      expect(nodeOf(settled, label).runs[0]!.announce).toEqual({
        to: MAIN,
        state: 'delivered',
        at: expect.any(Number),
      });
    }
    const root = settled.nodes[0]!;
    expect(root.runs.length).toBeGreaterThan(0);
    expect(root.runs.every((run) => run.announce === undefined)).toBe(true);
    expect(nodeOf(settled, 'E').sessionKey).toBe(echo);
  });

  it('cuts the tree at maxNodes and says so, limits the runs per node, and refuses an unknown root', async () => {
    h = await startSubagentHarness({ storeKind, script, ...config });
    await seedMain(h.store);
    for (const label of ['A', 'B', 'C']) await spawn('echo', label);
    await quiesce(h);
    // The announces may fold into one wake turn: one more turn gives the root runs to cut.
    const { runId } = await h.runtime.gateway.call('agent', {
      sessionKey: MAIN,
      message: 'and now?',
      deliver: false,
    });
    await h.runtime.gateway.call('agent.wait', { runId, timeoutMs: 10_000 });
    await quiesce(h);

    const cut = await h.runtime.gateway.call('sessions.tree', { key: MAIN, maxNodes: 3 });
    expect(cut.nodes.map((node) => node.label)).toEqual([undefined, 'A', 'B']);
    expect(cut.truncated).toBe(true);
    const whole = await h.runtime.gateway.call('sessions.tree', { key: MAIN, maxNodes: 4 });
    expect(whole.truncated).toBe(false);
    expect(whole.nodes).toHaveLength(4);

    const root = whole.nodes[0]!;
    expect(root.runs.length).toBeGreaterThan(1);
    const one = await h.runtime.gateway.call('sessions.tree', { key: MAIN, maxNodes: 1, runsPerNode: 1 });
    expect(one.nodes).toHaveLength(1);
    expect(one.truncated).toBe(true);
    expect(one.nodes[0]!.runs).toHaveLength(1);
    expect(one.nodes[0]!.olderRuns).toBe(true);
    // The newest run of the root: read against the store at once, since a late announce may still
    // wake the root with a run newer than `whole` saw (CI on PostgreSQL did).
    const { runtime, store } = h;
    const newest = async () => {
      const tree = await runtime.gateway.call('sessions.tree', { key: MAIN, maxNodes: 1, runsPerNode: 1 });
      const [stored] = await store.listRuns({ sessionKey: MAIN, limit: 1 });
      return tree.nodes[0]!.runs[0]!.runId === stored!.runId;
    };
    await expect.poll(newest, { timeout: 10_000 }).toBe(true);

    for (const params of [{ key: 'agent:main:nope' }, { key: MAIN, maxNodes: 0 }, { key: MAIN, extra: 1 }]) {
      const error = await h.runtime.gateway.call('sessions.tree', params as never).catch((e: unknown) => e);
      expect(isColloquyError(error) && error.code).toBe(
        params.key === MAIN ? 'INVALID_ARGUMENT' : 'SESSION_NOT_FOUND',
      );
    }
  });
});
