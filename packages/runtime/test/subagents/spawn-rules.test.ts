import { rmSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../support/harness.js';
import {
  allOutbox,
  call,
  isSubagent,
  MAIN,
  MAIN_CHAT,
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

type Spawned = {
  status: string;
  error?: string;
  runId: string;
  childSessionKey: string;
  model: string;
  mode: string;
  cleanup: string;
  threadId?: string;
};

async function boot(options: Partial<SubagentHarnessOptions> = {}): Promise<SubagentHarness> {
  h = await startSubagentHarness({ script: (r) => (isSubagent(r) ? 'child done' : 'ok'), ...options });
  await seedMain(h.store, { deliveryContext: { ...MAIN_CHAT, threadId: 't-9' } });
  return h;
}

const spawn = async (
  harness: SubagentHarness,
  args: Record<string, unknown>,
  requester = MAIN,
  sandboxed = false,
) => call<Spawned>((await harness.tools(requester, { sandboxed })).sessions_spawn, args);

describe('sessions_spawn defaults', () => {
  it('returns at once with the run, the child key and the model the child really runs', async () => {
    const harness = await boot({
      script: (r) => (isSubagent(r) ? { text: 'slow child', delayMs: 1000 } : 'ok'),
    });
    const result = await spawn(harness, { task: 'Summarise the doc' });
    // At once: the child's run has not ended when the call returns.
    expect(['queued', 'running']).toContain((await harness.store.getRun(result.runId))?.status);
    expect(result).toEqual({
      status: 'accepted',
      runId: expect.any(String),
      childSessionKey: expect.stringMatching(/^agent:main:subagent:[0-9a-f-]{36}$/),
      model: 'scripted/test',
      mode: 'run',
      cleanup: 'keep',
    });
    const child = (await harness.store.getSession(result.childSessionKey))!;
    expect(child).toMatchObject({
      kind: 'subagent',
      agentId: 'main',
      spawnedBy: MAIN,
      spawnDepth: 1,
      model: 'scripted/test',
      sandboxed: false,
      requesterOrigin: {
        sessionKey: MAIN,
        channel: 'memory',
        to: 'user-1',
        accountId: 'default',
        threadId: 't-9',
      },
      meta: { subagent: { mode: 'run', cleanup: 'keep', task: 'Summarise the doc', requesterKey: MAIN } },
    });
    const run = (await harness.store.getRun(result.runId))!;
    expect(run).toMatchObject({
      lane: 'subagent',
      deliver: false,
      spawnedBy: MAIN,
      message: 'Summarise the doc',
    });
    expect(run.timeoutMs).toBeUndefined();
    const request = await harness.model.waitForRequests(1).then((r) => r[0]!);
    expect(request.system).toContain('sub-agent at depth 1 of at most 1');
    expect(request.system).toContain('announced to the spawning session automatically');
    expect(request.system).toMatch(/never poll/i);
    expect(userTexts(request)).toEqual([
      `[Message from session ${MAIN} via sessions_spawn; it is not from the human user]\nSummarise the doc`,
    ]);
  });

  it('takes runTimeoutSeconds from agents.defaults.subagents, and from the call when given', async () => {
    const harness = await boot({
      config: { agents: { defaults: { subagents: { runTimeoutSeconds: 30 } } } },
    });
    const byDefault = await spawn(harness, { task: 'a' });
    expect((await harness.store.getRun(byDefault.runId))?.timeoutMs).toBe(30_000);
    const given = await spawn(harness, { task: 'b', runTimeoutSeconds: 5 });
    expect((await harness.store.getRun(given.runId))?.timeoutMs).toBe(5000);
    const none = await spawn(harness, { task: 'c', runTimeoutSeconds: 0 });
    expect((await harness.store.getRun(none.runId))?.timeoutMs).toBeUndefined();
  });

  it('gives the child the full tool set minus the session tools', async () => {
    const harness = await boot();
    await spawn(harness, { task: 'tools?' });
    const [request] = await harness.model.waitForRequests(1);
    expect(request!.tools.map((t) => t.name).sort()).toEqual(['echo', 'wait']);
  });

  it('applies tools.subagents.tools allow and deny', async () => {
    const harness = await boot({
      config: {
        tools: { subagents: { tools: { allow: ['sessions_list', 'echo', 'wait'], deny: ['wait'] } } },
      },
    });
    await spawn(harness, { task: 'tools?' });
    const [request] = await harness.model.waitForRequests(1);
    expect(request!.tools.map((t) => t.name).sort()).toEqual(['echo', 'sessions_list']);
  });

  it('runs the model given in the call and refuses an unknown one', async () => {
    const harness = await boot();
    const other = await spawn(harness, { task: 'x', model: 'scripted/other' });
    expect(other.model).toBe('scripted/other');
    expect((await harness.store.getSession(other.childSessionKey))?.model).toBe('scripted/other');
    const unknown = await spawn(harness, { task: 'x', model: 'nowhere/nothing' });
    expect(unknown).toEqual({
      status: 'error',
      error: expect.stringContaining('"nowhere/nothing" is not available'),
    });
  });

  it('refuses an empty task and unknown parameters', async () => {
    const harness = await boot();
    expect((await spawn(harness, { task: '   ' })).error).toContain('task is empty');
    expect((await spawn(harness, {})).error).toContain('/task');
    expect((await spawn(harness, { task: 'x', colour: 'red' })).status).toBe('error');
  });
});

describe('sessions_spawn forbidden cases', () => {
  it('refuses a sub-agent at maxSpawnDepth, and allows it below', async () => {
    const harness = await boot({ script: (r) => (isSubagent(r) ? { text: 'busy', delayMs: 200 } : 'ok') });
    const child = await spawn(harness, { task: 'first' });
    const denied = await spawn(harness, { task: 'deeper' }, child.childSessionKey);
    expect(denied).toEqual({ status: 'forbidden', error: expect.stringContaining('maxSpawnDepth is 1') });
    await h!.close();

    const deep = await boot({
      config: { agents: { defaults: { subagents: { maxSpawnDepth: 2 } } } },
      script: (r) => (isSubagent(r) ? { text: 'busy', delayMs: 200 } : 'ok'),
    });
    const parent = await spawn(deep, { task: 'first' });
    const grandchild = await spawn(deep, { task: 'deeper' }, parent.childSessionKey);
    expect(grandchild.status).toBe('accepted');
    expect(await deep.store.getSession(grandchild.childSessionKey)).toMatchObject({
      spawnDepth: 2,
      spawnedBy: parent.childSessionKey,
    });
    const tooDeep = await spawn(deep, { task: 'deepest' }, grandchild.childSessionKey);
    expect(tooDeep.status).toBe('forbidden');
  });

  it('refuses more active children than maxChildrenPerAgent, and allows again once they ended', async () => {
    const harness = await boot({
      config: { agents: { defaults: { subagents: { maxChildrenPerAgent: 2 } } } },
      script: (r) => (isSubagent(r) ? { text: 'done', delayMs: 150 } : 'ok'),
    });
    expect((await spawn(harness, { task: 'one' })).status).toBe('accepted');
    expect((await spawn(harness, { task: 'two' })).status).toBe('accepted');
    const third = await spawn(harness, { task: 'three' });
    expect(third).toEqual({ status: 'forbidden', error: expect.stringContaining('maxChildrenPerAgent = 2') });
    await waitFor(async () => (await allOutbox(harness.store)).length === 2, 3000);
    expect((await spawn(harness, { task: 'three again' })).status).toBe('accepted');
  });

  it('allows only its own agent by default, others through allowAgents, and "*" for any configured one', async () => {
    const agents = (allowAgents?: string[]) => ({
      agents: {
        list: [
          { id: 'main', default: true, ...(allowAgents ? { subagents: { allowAgents } } : {}) },
          { id: 'research' },
        ],
      },
    });
    let harness = await boot({ config: agents() });
    const denied = await spawn(harness, { task: 'x', agentId: 'research' });
    expect(denied).toEqual({ status: 'forbidden', error: expect.stringContaining('allowAgents') });
    expect((await spawn(harness, { task: 'x', agentId: 'main' })).status).toBe('accepted');
    await h!.close();

    harness = await boot({ config: agents(['research']) });
    const allowed = await spawn(harness, { task: 'x', agentId: 'Research' });
    expect(allowed.childSessionKey).toMatch(/^agent:research:subagent:/);
    await h!.close();

    harness = await boot({ config: agents(['*']) });
    expect((await spawn(harness, { task: 'x', agentId: 'research' })).status).toBe('accepted');
    expect(await spawn(harness, { task: 'x', agentId: 'ghost' })).toEqual({
      status: 'error',
      error: expect.stringContaining('no agent "ghost"'),
    });
  });

  it('refuses an unsandboxed target from a sandboxed caller or under sandbox "require"', async () => {
    const harness = await boot({
      config: {
        agents: {
          list: [
            { id: 'main', default: true, subagents: { allowAgents: ['*'] } },
            { id: 'boxed', sandboxed: true },
          ],
        },
      },
    });
    const fromSandbox = await spawn(harness, { task: 'x' }, MAIN, true);
    expect(fromSandbox).toEqual({ status: 'forbidden', error: expect.stringContaining('runs sandboxed') });
    const required = await spawn(harness, { task: 'x', sandbox: 'require' });
    expect(required).toEqual({ status: 'forbidden', error: expect.stringContaining('sandbox "require"') });
    const boxed = await spawn(harness, { task: 'x', agentId: 'boxed', sandbox: 'require' }, MAIN, true);
    expect(boxed.status).toBe('accepted');
    expect((await harness.store.getSession(boxed.childSessionKey))?.sandboxed).toBe(true);
  });

  it('refuses mode "session" without thread=true', async () => {
    const harness = await boot();
    expect(await spawn(harness, { task: 'x', mode: 'session' })).toEqual({
      status: 'error',
      error: expect.stringContaining('mode "session" needs thread=true'),
    });
  });

  it('refuses thread=true on a channel without threads', async () => {
    const harness = await boot();
    const result = await spawn(harness, { task: 'x', thread: true });
    expect(result).toEqual({ status: 'error', error: expect.stringContaining('cannot create threads') });
    expect(await harness.store.listSessions({ kinds: ['subagent'] })).toEqual([]);
  });
});

describe('sessions_spawn with a thread', () => {
  it('creates a thread in the requester chat, binds it to the child, and defaults mode to session', async () => {
    const harness = await boot({
      channel: { capabilities: { threads: true } },
      script: (r) => (isSubagent(r) ? `child heard: ${userTexts(r).at(-1)}` : 'ok'),
    });
    const result = await spawn(harness, { task: 'Plan the trip', label: 'trip', thread: true });
    expect(result).toMatchObject({ status: 'accepted', mode: 'session', threadId: expect.any(String) });
    expect(harness.channel.threads).toEqual([
      {
        threadId: result.threadId,
        parent: { channel: 'memory', to: 'user-1', accountId: 'default' },
        title: 'trip',
        sessionKey: result.childSessionKey,
      },
    ]);
    expect((await harness.store.getThreadBinding('memory', 'default', result.threadId!))?.sessionKey).toBe(
      result.childSessionKey,
    );
    const child = (await harness.store.getSession(result.childSessionKey))!;
    expect(child.deliveryContext).toEqual({ ...MAIN_CHAT, threadId: result.threadId });
    expect(child.meta).toMatchObject({ subagent: { mode: 'session' } });

    // A message in the thread reaches the child, and the child answers in the thread.
    await waitFor(async () => (await allOutbox(harness.store)).length === 1);
    await harness.channel.inject({ text: 'and the hotel?', threadId: result.threadId! });
    await waitFor(() =>
      harness.channel.textsTo('user-1', result.threadId).some((t) => t.includes('and the hotel?')),
    );
  });
});

describe('sessions_spawn failures leave nothing behind', () => {
  it('creates no thread and no binding when the attachments cannot be written', async () => {
    const harness = await boot({
      channel: { capabilities: { threads: true } },
      config: { tools: { sessions_spawn: { attachments: { enabled: true } } } },
    });
    rmSync(harness.workspaceDir, { recursive: true, force: true });
    writeFileSync(harness.workspaceDir, 'a file where the workspace folder should be');
    const result = await spawn(harness, {
      task: 'x',
      thread: true,
      attachments: [{ name: 'a.txt', content: 'hi' }],
    });
    expect(result.status).toBe('error');
    expect(harness.channel.threads).toEqual([]);
    expect(await harness.store.listThreadBindings()).toEqual([]);
    expect(await harness.store.listSessions({ kinds: ['subagent'] })).toEqual([]);
  });
});

describe('sessions_spawn cleanup', () => {
  it('deletes a "delete" child once its announce is delivered, keeping its run and outbox row', async () => {
    const harness = await boot();
    const result = await spawn(harness, { task: 'x', cleanup: 'delete' });
    await waitFor(
      async () =>
        (await harness.store.getOutbox(result.childSessionKey, result.runId))?.status === 'delivered',
    );
    await waitFor(async () => (await harness.store.getSession(result.childSessionKey)) === undefined);
    expect((await harness.store.getRun(result.runId))?.status).toBe('done');
  });

  it('archives a kept child after archiveAfterMinutes, on the sweep', async () => {
    const harness = await boot({
      config: { agents: { defaults: { subagents: { archiveAfterMinutes: 60 } } } },
    });
    const result = await spawn(harness, { task: 'x' });
    await waitFor(
      async () =>
        (await harness.store.getOutbox(result.childSessionKey, result.runId))?.status === 'delivered',
    );
    expect((await harness.runtime.subagents.sweep(Date.now() + 59 * 60_000)).archived).toEqual([]);
    const report = await harness.runtime.subagents.sweep(Date.now() + 61 * 60_000);
    expect(report.archived).toEqual([result.childSessionKey]);
    expect((await harness.store.getSession(result.childSessionKey))?.archivedAt).toBeTypeOf('number');
    expect(await harness.store.listSessions({ kinds: ['subagent'] })).toEqual([]);
  });
});
