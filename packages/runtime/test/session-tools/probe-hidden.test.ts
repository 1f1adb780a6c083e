import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, seed, startToolsHarness, type ToolSet, type ToolsHarness } from './tools-fixture.js';

/**
 * Spec section 11: a target that does not exist and a target the caller may not see get the same
 * answer, and that answer never names a key, sessionId or label the caller may not see. These
 * suites probe through the real runtime (gateway, store, scripted model) as a model would.
 */
const MAIN = 'agent:main:main';
const CHILD = 'agent:main:subagent:visible-child';

interface Hidden {
  key: string;
  sessionId: string;
  label: string;
  /** The agentId a label probe passes (the hidden session's agent). */
  agentId?: string;
}

interface Probe {
  name: string;
  run: (tools: ToolSet) => Promise<unknown>;
}

/** The same probe against a hidden target and a missing one, for every tool that takes a target. */
function probes(target: { key: string; sessionId: string; label: string; agentId?: string }): Probe[] {
  const byLabel = { label: target.label, ...(target.agentId ? { agentId: target.agentId } : {}) };
  const probesOf = (ref: string, how: string): Probe[] => [
    { name: `history by ${how}`, run: (t) => call(t.sessions_history, { sessionKey: ref }) },
    { name: `status by ${how}`, run: (t) => call(t.session_status, { sessionKey: ref }) },
    {
      name: `send by ${how}`,
      run: (t) => call(t.sessions_send, { sessionKey: ref, message: 'hello?', timeoutSeconds: 0 }),
    },
    { name: `kill by ${how}`, run: (t) => call(t.subagents, { action: 'kill', target: ref }) },
    {
      name: `steer by ${how}`,
      run: (t) => call(t.subagents, { action: 'steer', target: ref, message: 'change course' }),
    },
  ];
  return [
    ...probesOf(target.key, 'key'),
    ...probesOf(target.sessionId, 'sessionId'),
    { name: 'kill by label', run: (t) => call(t.subagents, { action: 'kill', target: target.label }) },
    {
      name: 'send by label',
      run: (t) => call(t.sessions_send, { ...byLabel, message: 'hello?', timeoutSeconds: 0 }),
    },
  ];
}

function expectNoLeak(result: unknown, hidden: Hidden): void {
  const json = JSON.stringify(result);
  expect(json).not.toContain(hidden.key);
  expect(json).not.toContain(hidden.sessionId);
  expect(json).not.toContain(hidden.label);
}

describe.each([
  {
    setting: 'tools.sessions.visibility',
    config: { tools: { sessions: { visibility: 'tree' as const } } },
    hidden: {
      key: 'agent:main:telegram:group:hidden-team',
      sessionId: 'sid-hidden-team-42',
      label: 'payroll',
    },
    missing: {
      key: 'agent:main:telegram:group:no-such-team',
      sessionId: 'sid-missing-77',
      label: 'no-label',
    },
  },
  {
    setting: 'tools.agentToAgent',
    config: { tools: { sessions: { visibility: 'all' as const } } },
    hidden: {
      key: 'agent:ops:discord:dm:hidden-bob',
      sessionId: 'sid-ops-bob-9',
      label: 'ops-secrets',
      agentId: 'ops',
    },
    missing: {
      key: 'agent:ops:discord:dm:no-such-bob',
      sessionId: 'sid-ops-gone-1',
      label: 'ops-none',
      agentId: 'ops',
    },
  },
])('probing under $setting', ({ setting, config, hidden, missing }) => {
  let h: ToolsHarness;
  beforeAll(async () => {
    h = await startToolsHarness({
      ...config,
      agents: { list: [{ id: 'main', default: true }, { id: 'ops' }] },
    });
    await seed(h.store, MAIN);
    await seed(h.store, CHILD, { spawnedBy: MAIN, spawnDepth: 1 });
    await seed(h.store, hidden.key, { sessionId: hidden.sessionId, label: hidden.label });
  });
  afterAll(async () => {
    await h.close();
  });

  const hiddenProbes = probes(hidden);
  const missingProbes = probes(missing);
  it.each(hiddenProbes.map((probe, i) => [probe.name, i] as const))(
    '%s: a hidden target gets exactly the answer of a missing one, naming the setting but not the target',
    async (_, i) => {
      const tools = h.tools(MAIN);
      const fromHidden = (await hiddenProbes[i]!.run(tools)) as { status: string; error: string };
      const fromMissing = await missingProbes[i]!.run(tools);
      expect(fromHidden).toEqual(fromMissing);
      expect(fromHidden.status).toBe('forbidden');
      expect(fromHidden.error).toMatch(/or it does not exist/);
      expectNoLeak(fromHidden, hidden);
      if (!/kill|steer/.test(hiddenProbes[i]!.name)) expect(fromHidden.error).toContain(setting);
    },
  );

  it('a label shared by a hidden session and a visible one resolves to the visible one', async () => {
    await h.store.patchSession(CHILD, { label: hidden.label });
    try {
      const sent = await call(h.tools(MAIN).sessions_send, {
        label: hidden.label,
        message: 'for the child',
        timeoutSeconds: 0,
      });
      expect(sent).toMatchObject({ status: 'accepted', sessionKey: CHILD });
      expect(JSON.stringify(sent)).not.toContain(hidden.key);
    } finally {
      await h.store.patchSession(CHILD, { label: null });
    }
  });

  it('sessions_list never names the hidden session', async () => {
    const listed = await call(h.tools(MAIN).sessions_list, {});
    expectNoLeak(listed, hidden);
  });
});

describe('sessions_list under visibility agent', () => {
  it('does not name a child another agent spawned from a visible session', async () => {
    const h = await startToolsHarness({
      tools: { sessions: { visibility: 'agent' } },
      agents: { list: [{ id: 'main', default: true }, { id: 'ops' }] },
    });
    try {
      const group = 'agent:main:telegram:group:team';
      const opsChild = 'agent:ops:subagent:hidden-helper';
      await seed(h.store, MAIN);
      await seed(h.store, group);
      await seed(h.store, opsChild, { spawnedBy: group, spawnDepth: 1 });
      const listed = await call<{ sessions: { key: string }[] }>(h.tools(MAIN).sessions_list, {});
      expect(listed.sessions.map((s) => s.key)).toContain(group);
      expect(JSON.stringify(listed)).not.toContain(opsChild);
    } finally {
      await h.close();
    }
  });
});
