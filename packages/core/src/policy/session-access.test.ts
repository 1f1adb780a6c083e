import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../config/resolve-config.js';
import type { ColloquyConfig, ColloquyConfigInput } from '../config/schema.js';
import {
  checkSessionAccess,
  effectiveVisibility,
  type SessionAccessInput,
  type SessionAction,
  unreachableTargetReason,
} from './session-access.js';

const MAIN = 'agent:main:main';
const CHILD = 'agent:main:subagent:c1';
const GRANDCHILD = 'agent:main:subagent:c2';
const GROUP = 'agent:main:telegram:group:-100Abc';
const OPS_MAIN = 'agent:ops:main';
const OPS_DM = 'agent:ops:discord:dm:Bob';

function configWith(input: ColloquyConfigInput = {}): ColloquyConfig {
  return resolveConfig({ agents: { list: [{ id: 'main', default: true }, { id: 'ops' }] }, ...input });
}

function check(overrides: Partial<SessionAccessInput> & Pick<SessionAccessInput, 'targetKey'>) {
  return checkSessionAccess({
    action: 'history',
    requesterKey: MAIN,
    targetAncestors: [],
    sandboxed: false,
    config: configWith(),
    ...overrides,
  });
}

function reasonOf(decision: ReturnType<typeof checkSessionAccess>): string {
  if (decision.allowed) throw new Error('expected a refusal');
  return decision.reason;
}

const visibility = (v: 'self' | 'tree' | 'agent' | 'all', extra: ColloquyConfigInput = {}) =>
  configWith({ ...extra, tools: { ...extra.tools, sessions: { visibility: v } } });

describe('effectiveVisibility', () => {
  it('is the configured visibility for an unsandboxed caller', () => {
    expect(effectiveVisibility(visibility('all'), false)).toBe('all');
  });

  it('clamps a sandboxed caller to tree by default, but never widens self', () => {
    expect(effectiveVisibility(visibility('all'), true)).toBe('tree');
    expect(effectiveVisibility(visibility('agent'), true)).toBe('tree');
    expect(effectiveVisibility(visibility('self'), true)).toBe('self');
  });

  it('does not clamp when sessionToolsVisibility is all', () => {
    const config = visibility('all', {
      agents: { defaults: { sandbox: { sessionToolsVisibility: 'all' } } },
    });
    expect(effectiveVisibility(config, true)).toBe('all');
  });
});

describe('checkSessionAccess: visibility', () => {
  it('always lets a session read itself', () => {
    for (const v of ['self', 'tree', 'agent', 'all'] as const) {
      expect(check({ targetKey: MAIN, config: visibility(v) }).allowed).toBe(true);
    }
  });

  it('self: refuses everything else and names the setting', () => {
    const reason = reasonOf(check({ targetKey: CHILD, targetAncestors: [MAIN], config: visibility('self') }));
    expect(reason).toContain('tools.sessions.visibility is "self"');
  });

  it('tree: reaches descendants at any depth, not siblings or the parent', () => {
    const config = visibility('tree');
    expect(check({ targetKey: CHILD, targetAncestors: [MAIN], config }).allowed).toBe(true);
    expect(check({ targetKey: GRANDCHILD, targetAncestors: [CHILD, MAIN], config }).allowed).toBe(true);
    expect(check({ targetKey: GROUP, config }).allowed).toBe(false);
    expect(check({ requesterKey: CHILD, targetKey: MAIN, config }).allowed).toBe(false);
    expect(reasonOf(check({ targetKey: GROUP, config }))).toContain('"agent"');
  });

  it('agent: reaches every session of the same agent but not other agents', () => {
    const config = visibility('agent');
    expect(check({ targetKey: GROUP, config }).allowed).toBe(true);
    expect(check({ targetKey: 'cron:nightly', config }).allowed).toBe(true);
    const reason = reasonOf(check({ targetKey: OPS_MAIN, config }));
    expect(reason).toContain('tools.sessions.visibility is "agent"');
    expect(reason).toContain('"all"');
    expect(reason).not.toContain('ops');
  });

  it('all: other agents need agent-to-agent enabled and both agents allowed (spec section 11)', () => {
    expect(reasonOf(check({ targetKey: OPS_DM, config: visibility('all') }))).toContain(
      'tools.agentToAgent.enabled',
    );
    const notListed = visibility('all', { tools: { agentToAgent: { enabled: true, allow: ['research'] } } });
    expect(reasonOf(check({ targetKey: OPS_DM, config: notListed }))).toContain('tools.agentToAgent.allow');
    const targetOnly = visibility('all', { tools: { agentToAgent: { enabled: true, allow: ['ops'] } } });
    expect(reasonOf(check({ targetKey: OPS_DM, config: targetOnly }))).toContain('"main" is not');
    const requesterOnly = visibility('all', { tools: { agentToAgent: { enabled: true, allow: ['main'] } } });
    const hiddenAgent = reasonOf(check({ targetKey: OPS_DM, config: requesterOnly }));
    expect(hiddenAgent).toContain('must list the other agent too');
    expect(hiddenAgent).not.toContain('ops');
    const listed = visibility('all', { tools: { agentToAgent: { enabled: true, allow: ['ops', 'main'] } } });
    expect(check({ targetKey: OPS_DM, config: listed }).allowed).toBe(true);
    const star = visibility('all', { tools: { agentToAgent: { enabled: true, allow: ['*'] } } });
    expect(check({ targetKey: OPS_DM, config: star }).allowed).toBe(true);
    expect(check({ targetKey: GROUP, config: visibility('all') }).allowed).toBe(true);
  });

  it('lets a tree reach a child spawned under another agent', () => {
    const child = 'agent:ops:subagent:x1';
    expect(check({ targetKey: child, targetAncestors: [MAIN], config: visibility('tree') }).allowed).toBe(
      true,
    );
  });

  it('clamps a sandboxed caller to its tree and says how to lift it', () => {
    const config = visibility('all', { tools: { agentToAgent: { enabled: true, allow: ['*'] } } });
    expect(check({ targetKey: CHILD, targetAncestors: [MAIN], config, sandboxed: true }).allowed).toBe(true);
    const reason = reasonOf(check({ targetKey: GROUP, config, sandboxed: true }));
    expect(reason).toContain('agents.defaults.sandbox.sessionToolsVisibility');
    expect(check({ targetKey: GROUP, config, sandboxed: false }).allowed).toBe(true);
  });
});

describe('checkSessionAccess: keys', () => {
  it('resolves main to the requester agent main key', () => {
    expect(check({ targetKey: 'main', config: visibility('self') }).allowed).toBe(true);
    expect(check({ requesterKey: CHILD, targetKey: 'MAIN', config: visibility('tree') }).allowed).toBe(false);
  });

  it('normalises spelling of both keys and of the ancestors', () => {
    const config = visibility('tree');
    expect(
      check({
        requesterKey: ' Agent:MAIN:Main ',
        targetKey: 'AGENT:main:SUBAGENT:C1',
        targetAncestors: [' agent:Main:MAIN'],
        config,
      }).allowed,
    ).toBe(true);
  });

  it('never reaches reserved keys', () => {
    const config = visibility('all', { tools: { agentToAgent: { enabled: true, allow: ['*'] } } });
    for (const key of ['global', 'UNKNOWN', ' unknown ']) {
      expect(reasonOf(check({ targetKey: key, config }))).toContain('reserved');
    }
  });

  it('resolves global to main under the global scope', () => {
    const config = visibility('self', { session: { scope: 'global' } });
    expect(check({ targetKey: 'global', config }).allowed).toBe(true);
  });

  it('refuses malformed target keys with the parser reason', () => {
    expect(reasonOf(check({ targetKey: 'agent::x' }))).toContain('empty part');
    expect(reasonOf(check({ targetKey: '' }))).toContain('empty');
  });
});

describe('checkSessionAccess: send, steer and kill', () => {
  const open = visibility('all', { tools: { agentToAgent: { enabled: true, allow: ['*'] } } });

  it('refuses sending to itself, in any spelling', () => {
    for (const key of [MAIN, 'main', ' AGENT:main:MAIN ']) {
      expect(reasonOf(check({ action: 'send', targetKey: key, config: open }))).toContain(
        'cannot send to itself',
      );
    }
    expect(check({ action: 'send', targetKey: GROUP, config: open }).allowed).toBe(true);
  });

  it.each(['steer', 'kill'] as const)('%s reaches only descendants, whatever the visibility', (action) => {
    expect(
      check({ action, targetKey: CHILD, targetAncestors: [MAIN], config: visibility('self') }).allowed,
    ).toBe(true);
    expect(
      check({ action, targetKey: GRANDCHILD, targetAncestors: [CHILD, MAIN], config: open }).allowed,
    ).toBe(true);
    expect(reasonOf(check({ action, targetKey: MAIN, config: open }))).toContain('itself');
    expect(reasonOf(check({ action, targetKey: GROUP, config: open }))).toContain('subagents list');
    expect(check({ action, requesterKey: CHILD, targetKey: MAIN, config: open }).allowed).toBe(false);
  });
});

describe('checkSessionAccess: a refusal never tells a hidden target from a missing one (spec section 11)', () => {
  const configs: Record<string, ColloquyConfig> = {
    self: visibility('self'),
    tree: visibility('tree'),
    agent: visibility('agent'),
    'all, a2a off': visibility('all'),
    'all, only main allowed': visibility('all', {
      tools: { agentToAgent: { enabled: true, allow: ['main'] } },
    }),
    'all, only ops allowed': visibility('all', {
      tools: { agentToAgent: { enabled: true, allow: ['ops'] } },
    }),
  };
  const hidden = [GROUP, OPS_MAIN, OPS_DM, 'agent:ops:subagent:secret-7'];

  it.each(Object.entries(configs))('%s: every refused target gets the missing-target answer', (_, config) => {
    for (const action of ['history', 'send', 'status', 'steer', 'kill'] as const) {
      for (const sandboxed of [false, true]) {
        const missing = unreachableTargetReason({ action, requesterKey: MAIN, sandboxed, config });
        expect(missing).toContain('or it does not exist');
        for (const targetKey of hidden) {
          const decision = check({ action, targetKey, config, sandboxed });
          if (decision.allowed) continue;
          expect(decision.reason, `${action} ${targetKey}`).toBe(missing);
          expect(decision.reason).not.toContain(targetKey);
          expect(decision.reason).not.toContain('telegram');
        }
      }
    }
  });

  it('names the setting that governs the refusal', () => {
    const reason = (config: ColloquyConfig, sandboxed = false, action: SessionAction = 'history') =>
      unreachableTargetReason({ action, requesterKey: MAIN, sandboxed, config });
    expect(reason(configs.tree!)).toContain('tools.sessions.visibility is "tree"');
    expect(reason(configs['all, a2a off']!)).toContain('tools.agentToAgent.enabled is false');
    expect(reason(configs['all, only ops allowed']!)).toContain('"main" is not in tools.agentToAgent.allow');
    expect(reason(configs['all, a2a off']!, true)).toContain(
      'agents.defaults.sandbox.sessionToolsVisibility',
    );
    expect(reason(configs.agent!, false, 'kill')).toContain(
      'subagents kill only reaches sessions this session spawned',
    );
  });

  it('property: the refusal for any hidden key is the refusal for a missing one', () => {
    const segment = fc.stringMatching(/^[a-z0-9_-]{1,12}$/).map((id) => `hid-${id}`);
    const hiddenKey = fc.oneof(
      fc.tuple(fc.constantFrom('ops', 'sec'), segment).map(([agent, id]) => `agent:${agent}:subagent:${id}`),
      fc
        .tuple(fc.constantFrom('telegram', 'discord'), segment)
        .map(([ch, id]) => `agent:main:${ch}:group:${id}`),
    );
    fc.assert(
      fc.property(
        hiddenKey,
        fc.constantFrom(...Object.keys(configs)),
        fc.constantFrom<SessionAction>('history', 'send', 'status', 'steer', 'kill'),
        fc.boolean(),
        (targetKey, name, action, sandboxed) => {
          const config = configs[name]!;
          const decision = check({ action, targetKey, config, sandboxed });
          if (decision.allowed) return;
          expect(decision.reason).toBe(
            unreachableTargetReason({ action, requesterKey: MAIN, sandboxed, config }),
          );
          expect(decision.reason).not.toContain(targetKey.split(':').at(-1)!);
          expect(decision.reason).not.toContain(targetKey);
        },
      ),
    );
  });
});

// --- property: no spelling reaches a session the guard refuses ---

const CASE_FREE = new Set([
  'agent',
  'main',
  'ops',
  'telegram',
  'discord',
  'dm',
  'group',
  'subagent',
  'c1',
  'c2',
  'x1',
]);

/** Respells a key: random case on parts whose case does not matter, whitespace around parts. */
function respell(key: string, flips: readonly boolean[], pad: string): string {
  return key
    .split(':')
    .map((part, i) => {
      const cased = CASE_FREE.has(part)
        ? [...part].map((c, j) => (flips[(i + j) % flips.length] ? c.toUpperCase() : c)).join('')
        : part;
      return `${pad}${cased}${i % 2 === 0 ? '' : pad}`;
    })
    .join(':');
}

describe('guard properties', () => {
  const sessions = [
    MAIN,
    CHILD,
    GRANDCHILD,
    GROUP,
    OPS_MAIN,
    OPS_DM,
    'agent:ops:subagent:x1',
    'cron:nightly',
  ];
  const ancestry: Record<string, string[]> = {
    [CHILD]: [MAIN],
    [GRANDCHILD]: [CHILD, MAIN],
    'agent:ops:subagent:x1': [OPS_MAIN],
  };
  const configArb = fc
    .record({
      visibility: fc.constantFrom('self' as const, 'tree' as const, 'agent' as const, 'all' as const),
      enabled: fc.boolean(),
      allow: fc.subarray(['main', 'ops', '*']),
      clamp: fc.constantFrom('spawned' as const, 'all' as const),
    })
    .map((c) =>
      configWith({
        tools: {
          sessions: { visibility: c.visibility },
          agentToAgent: { enabled: c.enabled, allow: c.allow },
        },
        agents: {
          list: [{ id: 'main', default: true }, { id: 'ops' }],
          defaults: { sandbox: { sessionToolsVisibility: c.clamp } },
        },
      }),
    );
  const actionArb = fc.constantFrom<SessionAction>('list', 'history', 'send', 'status', 'steer', 'kill');

  it('decides the same for every spelling of the requester, the target and the ancestors', () => {
    fc.assert(
      fc.property(
        configArb,
        actionArb,
        fc.constantFrom(...sessions),
        fc.constantFrom(...sessions),
        fc.boolean(),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 6 }),
        fc.constantFrom('', ' ', '\t'),
        fc.boolean(),
        (config, action, requesterKey, targetKey, sandboxed, flips, pad, useAlias) => {
          const targetAncestors = ancestry[targetKey] ?? [];
          const canonical = checkSessionAccess({
            action,
            requesterKey,
            targetKey,
            targetAncestors,
            sandboxed,
            config,
          });
          const requesterMain = `agent:${requesterKey.split(':')[1] ?? 'main'}:main`;
          const spelledTarget =
            useAlias && targetKey === requesterMain && requesterKey.startsWith('agent:')
              ? 'Main'
              : respell(targetKey, flips, pad);
          const spelled = checkSessionAccess({
            action,
            requesterKey: respell(requesterKey, [...flips].reverse(), pad),
            targetKey: spelledTarget,
            targetAncestors: targetAncestors.map((a) => respell(a, flips, pad)),
            sandboxed,
            config,
          });
          expect(spelled.allowed).toBe(canonical.allowed);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('never grants more than visibility allows: self sees only itself, tree only itself and descendants', () => {
    fc.assert(
      fc.property(
        configArb,
        actionArb,
        fc.constantFrom(...sessions),
        fc.constantFrom(...sessions),
        fc.boolean(),
        (config, action, requesterKey, targetKey, sandboxed) => {
          const targetAncestors = ancestry[targetKey] ?? [];
          const verdict = checkSessionAccess({
            action,
            requesterKey,
            targetKey,
            targetAncestors,
            sandboxed,
            config,
          });
          if (!verdict.allowed) return;
          const isSelf = requesterKey === targetKey;
          const isDescendant = targetAncestors.includes(requesterKey);
          if (action === 'steer' || action === 'kill') {
            expect(isDescendant).toBe(true);
            return;
          }
          if (action === 'send') expect(isSelf).toBe(false);
          const v = effectiveVisibility(config, sandboxed);
          if (v === 'self') expect(isSelf).toBe(true);
          if (v === 'tree') expect(isSelf || isDescendant).toBe(true);
          const agentOf = (k: string) => (k.startsWith('agent:') ? k.split(':')[1] : 'main');
          if (v === 'agent')
            expect(isSelf || isDescendant || agentOf(requesterKey) === agentOf(targetKey)).toBe(true);
        },
      ),
      { numRuns: 400 },
    );
  });
});

describe('checkSessionAccess: forked sessions (spec section 11)', () => {
  const OPS_FORK = 'agent:ops:subagent:fork-1';
  const admitted = (v: 'agent' | 'all') =>
    visibility(v, { tools: { agentToAgent: { enabled: true, allow: ['main', 'ops'] } } });

  it('refuses a fork to a caller that may not read the session it was forked from', () => {
    const verdict = check({
      requesterKey: OPS_MAIN,
      targetKey: OPS_FORK,
      targetAncestors: [MAIN],
      targetInheritsFrom: 1,
      config: admitted('agent'),
    });
    expect(verdict.allowed).toBe(false);
    expect(reasonOf(verdict)).toContain('or it does not exist');
    expect(reasonOf(verdict)).not.toContain(MAIN);
  });

  it('lets the same caller reach an isolated child of the same parent, and a fork once it may read the parent', () => {
    const isolated = { requesterKey: OPS_MAIN, targetKey: OPS_FORK, targetAncestors: [MAIN] };
    expect(check({ ...isolated, config: admitted('agent') }).allowed).toBe(true);
    expect(check({ ...isolated, targetInheritsFrom: 1, config: admitted('all') }).allowed).toBe(true);
  });

  it('follows a fork of a fork to every session whose history it holds', () => {
    const nested = {
      requesterKey: OPS_MAIN,
      targetKey: 'agent:ops:subagent:fork-2',
      targetAncestors: [OPS_FORK, MAIN],
      config: admitted('agent'),
    };
    expect(check({ ...nested, targetInheritsFrom: 1 }).allowed).toBe(true);
    expect(check({ ...nested, targetInheritsFrom: 2 }).allowed).toBe(false);
  });

  it('lets a requester send to its own fork (the source is read, not sent to)', () => {
    const own = { targetKey: CHILD, targetAncestors: [MAIN], targetInheritsFrom: 1 };
    expect(check({ ...own, action: 'send', config: visibility('tree') }).allowed).toBe(true);
    expect(check({ ...own, requesterKey: CHILD, config: visibility('self') }).allowed).toBe(true);
  });
});
