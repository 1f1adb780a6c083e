import { describe, expect, it } from 'vitest';
import { subagentMetaOf, subagentSystemPrompt } from './subagents-meta.js';

describe('subagentSystemPrompt', () => {
  it('tells a leaf sub-agent its depth, that its result announces itself, and not to poll', () => {
    const text = subagentSystemPrompt({ depth: 1, maxDepth: 1, requesterDisplayKey: 'main', mode: 'run' });
    expect(text).toContain('depth 1 of at most 1');
    expect(text).toContain('spawned by the session main');
    expect(text).toContain('announced to the spawning session automatically');
    expect(text).toContain('cannot spawn further sub-agents');
    expect(text).toMatch(/never poll/i);
    expect(text).toContain('ANNOUNCE_SKIP');
  });

  it('lets a sub-agent above the depth limit spawn, and names it by label', () => {
    const text = subagentSystemPrompt({
      depth: 1,
      maxDepth: 2,
      requesterDisplayKey: 'main',
      mode: 'session',
      label: 'scout',
    });
    expect(text).toContain('sub-agent "scout"');
    expect(text).toContain('You may spawn sub-agents of your own');
    expect(text).toContain('own thread');
  });
});

describe('subagentMetaOf', () => {
  it('reads a well-formed meta and ignores anything else', () => {
    const meta = { mode: 'run', cleanup: 'keep', task: 't', requesterKey: 'agent:main:main', spawnedAt: 1 };
    expect(subagentMetaOf({ meta: { subagent: meta } })).toEqual(meta);
    expect(subagentMetaOf({ meta: { subagent: { ...meta, mode: 'forever' } } })).toBeUndefined();
    expect(subagentMetaOf({ meta: { subagent: 'run' } })).toBeUndefined();
    expect(subagentMetaOf({})).toBeUndefined();
  });
});
