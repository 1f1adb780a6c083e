import { createSessionTools, resolveConfig } from '@colloquy/core';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS } from '../support/harness.js';
import { expectedVisible, type Visibility } from './expected-visibility.js';
import { call, seed, startToolsHarness, T0, type ToolsHarness } from './tools-fixture.js';

/**
 * Property: whatever the query, filters, limit and offset, sessions_search, sessions_list and
 * sessions_history never return anything of a session the guard refuses. The expected visibility
 * is stated independently of the guard (spec section 9), as in the visibility matrix.
 */
const KEYS = {
  self: 'agent:main:main',
  child: 'agent:main:subagent:p-child',
  grandchild: 'agent:main:subagent:p-grandchild',
  sameAgent: 'agent:main:telegram:group:p-team',
  otherAllowed: 'agent:ops:main',
  otherDenied: 'agent:sec:main',
} as const;
type PropertyTarget = keyof typeof KEYS;
const TARGETS = Object.keys(KEYS) as PropertyTarget[];
const WORDS = ['amber', 'basalt', 'cedar', 'delta', 'ember', 'fjord'];

function visible(visibility: Visibility, sandboxed: boolean, target: PropertyTarget): boolean {
  return expectedVisible(visibility, sandboxed, target === 'grandchild' ? 'child' : target);
}

/** The internal key of a key as the tools show it (`main` is the requester's own main session). */
const internalKey = (shown: string): string => (shown === 'main' ? KEYS.self : shown);

describe.each(STORE_KINDS)('no page ever shows a session the guard refuses (%s store)', (storeKind) => {
  let h: ToolsHarness;
  beforeAll(async () => {
    h = await startToolsHarness({}, {}, { storeKind });
    for (const target of TARGETS) await seed(h.store, KEYS[target]);
    await h.store.patchSession(KEYS.child, { spawnedBy: KEYS.self, spawnDepth: 1 });
    await h.store.patchSession(KEYS.grandchild, { spawnedBy: KEYS.child, spawnDepth: 2 });
    for (const [n, target] of TARGETS.entries()) {
      // Every session holds every word, in many messages, so hidden ones always match.
      const messages = Array.from({ length: 12 }, (_, i) => ({
        role: (i % 2 === 0 ? 'user' : 'assistant') as 'user' | 'assistant',
        content: `${WORDS.slice(0, 1 + ((i + n) % WORDS.length)).join(' ')} tag-${target}`,
        timestamp: T0 + i,
      }));
      await h.store.appendMessages(KEYS[target], messages);
    }
  });
  afterAll(async () => {
    await h?.close();
  });

  it('holds for random queries, filters, limits and offsets under every visibility', async () => {
    const gateway = h.runtime.gateway;
    let hitsSeen = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<Visibility>('self', 'tree', 'agent', 'all'),
        fc.boolean(),
        fc.oneof(
          fc.subarray(WORDS, { minLength: 1 }).map((w) => w.join(' ')),
          fc.string({ maxLength: 20 }).map((s) => `${s} amber`),
          fc.constantFrom(...TARGETS).map((t) => `tag ${t}`),
        ),
        fc.option(fc.constantFrom(...TARGETS), { nil: undefined }),
        fc.option(fc.subarray(['main', 'group', 'subagent', 'other', 'dm']), { nil: undefined }),
        fc.integer({ min: 1, max: 60 }),
        fc.oneof(fc.integer({ min: 0, max: 80 }), fc.double({ min: 0, max: 80, noNaN: true })),
        async (visibility, sandboxed, query, only, kinds, limit, offset) => {
          const config = resolveConfig({
            tools: { sessions: { visibility }, agentToAgent: { enabled: true, allow: ['main', 'ops'] } },
          });
          const tools = Object.fromEntries(
            createSessionTools({ requesterKey: KEYS.self, agentId: 'main', sandboxed, config, gateway }).map(
              (t) => [t.name, t],
            ),
          );
          const allowed = new Set<string>(
            TARGETS.filter((t) => visible(visibility, sandboxed, t)).map((t) => KEYS[t]),
          );
          const search = await call<{ hits?: { sessionKey: string; snippet: string }[]; status?: string }>(
            tools.sessions_search,
            {
              query,
              limit,
              offset,
              ...(only ? { sessionKey: KEYS[only] } : {}),
              ...(kinds ? { kinds } : {}),
            },
          );
          if (only && !allowed.has(KEYS[only])) expect(search.status).toBe('forbidden');
          hitsSeen += search.hits?.length ?? 0;
          for (const hit of search.hits ?? []) {
            expect(allowed.has(internalKey(hit.sessionKey))).toBe(true);
            for (const target of TARGETS) {
              if (!allowed.has(KEYS[target])) expect(hit.snippet).not.toContain(`tag-${target}`);
            }
          }
          const list = await call<{ sessions: { key: string }[] }>(tools.sessions_list, {
            limit,
            offset,
            ...(kinds ? { kinds } : {}),
          });
          for (const row of list.sessions) expect(allowed.has(internalKey(row.key))).toBe(true);
          const target = only ?? 'otherDenied';
          const history = await call<{ messages?: { content: unknown }[]; status?: string }>(
            tools.sessions_history,
            { sessionKey: KEYS[target], limit, offset },
          );
          if (!allowed.has(KEYS[target])) {
            expect(history.status).toBe('forbidden');
            expect(history.messages).toBeUndefined();
          }
        },
      ),
      {
        numRuns: storeKind === 'postgres' ? 25 : 60,
        // A case that must find hits, so the sanity check below never rests on luck.
        examples: [['all', false, WORDS[0]!, undefined, undefined, 10, 0]],
      },
    );
    expect(hitsSeen).toBeGreaterThan(0);
  });
});
