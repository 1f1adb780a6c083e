import { describe, expect, it } from 'vitest';
import { checkSessionAccess, evaluateSendPolicy, readSessionLineage, resolveConfig } from './index.js';
import { MemoryStore } from './store.js';

// An app asks the two questions of the mission through the public doors alone, without running a tool.
describe('the public doors answer "may A see B?" and "may A send to B?"', () => {
  const config = resolveConfig({
    session: { sendPolicy: { rules: [{ match: { channel: 'discord' }, action: 'deny' }] } },
  });

  it("lets a session see the sub-agent it spawned, with the lineage read from the store, and not another's", async () => {
    const store = new MemoryStore();
    const base = { agentId: 'main', createdAt: 0, updatedAt: 0 } as const;
    await store.putSession({ ...base, key: 'agent:main:main', sessionId: 'm', kind: 'main' });
    await store.putSession({
      ...base,
      key: 'agent:main:subagent:c1',
      sessionId: 'c1',
      kind: 'subagent',
      spawnedBy: 'agent:main:main',
    });
    await store.putSession({ ...base, key: 'agent:main:dm:7', sessionId: 'd', kind: 'dm' });
    const mayRead = async (requesterKey: string, targetKey: string) => {
      const target = await store.getSession(targetKey);
      const lineage = target
        ? await readSessionLineage(target, (key) => store.getSession(key))
        : { ancestors: [], inheritsFrom: 0 };
      return checkSessionAccess({
        action: 'history',
        requesterKey,
        targetKey,
        targetAncestors: lineage.ancestors,
        targetInheritsFrom: lineage.inheritsFrom,
        sandboxed: false,
        config,
      }).allowed;
    };

    expect(await mayRead('main', 'agent:main:subagent:c1')).toBe(true);
    expect(await mayRead('agent:main:subagent:c1', 'agent:main:dm:7')).toBe(false);
    expect(await mayRead('main', 'agent:main:dm:7')).toBe(false);
  });

  it('refuses a send to a session whose channel a deny rule names, and allows one elsewhere', () => {
    const policy = config.session.sendPolicy;
    const discord = evaluateSendPolicy({ key: 'agent:main:discord:channel:9' }, policy);
    expect(discord).toMatchObject({ allowed: false, source: 'rule' });
    expect(discord.reason).toContain('session.sendPolicy.rules[0]');
    expect(evaluateSendPolicy({ key: 'agent:main:telegram:dm:4' }, policy).allowed).toBe(true);
  });
});
