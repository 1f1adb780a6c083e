import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  expectedCountableTarget,
  expectedVisible,
  type Target,
  type Visibility,
} from './expected-visibility.js';
import { call, seed, startToolsHarness, type ToolsHarness } from './tools-fixture.js';

/**
 * The visibility matrix of spec section 9, stated independently of the guard:
 * visibility x sandboxed x target (self, own child, same agent, other agent allowed / not allowed)
 * x action (list, history, send, status).
 */

const KEYS: Record<Target, string> = {
  self: 'agent:main:main',
  child: 'agent:main:subagent:child-1',
  sameAgent: 'agent:main:telegram:group:team',
  otherAllowed: 'agent:ops:main',
  otherDenied: 'agent:sec:main',
};
const GRANDCHILD = 'agent:main:subagent:grandchild-1';

const VISIBILITIES: Visibility[] = ['self', 'tree', 'agent', 'all'];
const TARGETS = Object.keys(KEYS) as Target[];

describe.each(VISIBILITIES)('visibility %s', (visibility) => {
  let h: ToolsHarness;
  beforeAll(async () => {
    h = await startToolsHarness({
      tools: { sessions: { visibility }, agentToAgent: { enabled: true, allow: ['main', 'ops'] } },
      session: { agentToAgent: { maxPingPongTurns: 0 } },
      agents: { list: [{ id: 'main', default: true }, { id: 'ops' }, { id: 'sec' }] },
    });
    for (const key of Object.values(KEYS)) await seed(h.store, key);
    await h.store.patchSession(KEYS.child, { spawnedBy: KEYS.self, spawnDepth: 1 });
    await seed(h.store, GRANDCHILD, { spawnedBy: KEYS.child, spawnDepth: 2 });
  });
  afterAll(async () => {
    await h.close();
  });

  describe.each([false, true])('sandboxed=%s', (sandboxed) => {
    it('sessions_list shows exactly the visible sessions and counts the hidden ones', async () => {
      const result = await call<{
        sessions: { key: string }[];
        filtered?: { hidden: number; reason: string };
      }>(h.tools(KEYS.self, { sandboxed }).sessions_list, {});
      const listed = new Set(result.sessions.map((s) => s.key));
      const visibleTargets = TARGETS.filter((t) => expectedVisible(visibility, sandboxed, t));
      const grandchildVisible = expectedVisible(visibility, sandboxed, 'child');
      for (const target of TARGETS) {
        const shown = target === 'self' ? 'main' : KEYS[target];
        expect(listed.has(shown), `${target} listed`).toBe(visibleTargets.includes(target));
      }
      expect(listed.has(GRANDCHILD)).toBe(grandchildVisible);
      // The grandchild is main's own too, so countable whenever it is hidden.
      const countable = TARGETS.filter(expectedCountableTarget).length + 1;
      const hiddenCount = countable - listed.size;
      if (hiddenCount === 0) expect(result.filtered).toBeUndefined();
      else {
        expect(result.filtered?.hidden).toBe(hiddenCount);
        expect(result.filtered?.reason).toMatch(/tools\.sessions\.visibility/);
      }
    });

    it.each(TARGETS)('history, status and send on %s follow the matrix', async (target) => {
      const tools = h.tools(KEYS.self, { sandboxed });
      const visible = expectedVisible(visibility, sandboxed, target);
      const history = await call<{ status?: string; sessionKey?: string }>(tools.sessions_history, {
        sessionKey: KEYS[target],
      });
      const status = await call<{ status?: string; sessionKey?: string }>(tools.session_status, {
        sessionKey: KEYS[target],
      });
      const send = await call<{ status: string; error?: string }>(tools.sessions_send, {
        sessionKey: KEYS[target],
        message: 'ping',
        timeoutSeconds: 0,
      });
      if (visible) {
        expect(history.status).toBeUndefined();
        expect(history.sessionKey).toBe(target === 'self' ? 'main' : KEYS[target]);
        expect(status.sessionKey).toBe(target === 'self' ? 'main' : KEYS[target]);
      } else {
        expect(history.status).toBe('forbidden');
        expect(status.status).toBe('forbidden');
      }
      if (target === 'self') {
        expect(send.status).toBe('forbidden');
        expect(send.error).toMatch(/own session|itself|self/i);
      } else {
        expect(send.status).toBe(visible ? 'accepted' : 'forbidden');
      }
    });
  });
});

describe('the guard cannot be sidestepped by spelling', () => {
  let h: ToolsHarness;
  beforeAll(async () => {
    h = await startToolsHarness({ tools: { sessions: { visibility: 'tree' } } });
    await seed(h.store, KEYS.self);
    await seed(h.store, KEYS.sameAgent);
    await seed(h.store, 'global');
  });
  afterAll(async () => {
    await h.close();
  });

  it('refuses a hidden session however its key is written, including by sessionId', async () => {
    const tools = h.tools(KEYS.self);
    const sessionId = (await h.store.getSession(KEYS.sameAgent))!.sessionId;
    for (const spelling of [
      KEYS.sameAgent,
      KEYS.sameAgent.toUpperCase(),
      `  ${KEYS.sameAgent}\n`,
      'Agent:MAIN:Telegram:Group:team',
      sessionId,
      ` ${sessionId} `,
    ]) {
      const history = await call<{ status: string }>(tools.sessions_history, { sessionKey: spelling });
      expect(history.status, spelling).toMatch(/forbidden|error/);
      const send = await call<{ status: string }>(tools.sessions_send, {
        sessionKey: spelling,
        message: 'x',
      });
      expect(send.status, spelling).toMatch(/forbidden|error/);
    }
  });

  it('never lists or opens the reserved global key', async () => {
    const tools = h.tools(KEYS.self);
    const listed = await call<{ sessions: { key: string }[] }>(tools.sessions_list, {});
    expect(listed.sessions.map((s) => s.key)).not.toContain('global');
    const history = await call<{ status: string }>(tools.sessions_history, { sessionKey: 'global' });
    expect(history.status).toMatch(/forbidden|error/);
  });
});
