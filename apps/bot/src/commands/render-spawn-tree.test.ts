import type { SubagentRow } from '@colloquy/core/gateway';
import { describe, expect, it } from 'vitest';
import { renderSpawnTree } from './render-spawn-tree.js';

const row = (over: Partial<SubagentRow> & Pick<SubagentRow, 'index' | 'sessionKey'>): SubagentRow => ({
  status: 'done',
  active: false,
  depth: 1,
  spawnedBy: 'main',
  ...over,
});

describe('renderSpawnTree', () => {
  it('draws each sub-agent under the session that spawned it, with status, duration and tokens', () => {
    // Breadth first, as descendantsOf lists them: the grandchild comes after both children.
    const subagents = [
      row({
        index: 1,
        sessionKey: 's:a',
        label: 'research',
        status: 'running',
        active: true,
        runtimeMs: 40_200,
      }),
      row({ index: 2, sessionKey: 's:b', label: 'summary', status: 'queued', active: true }),
      row({
        index: 3,
        sessionKey: 's:c',
        label: 'sources',
        depth: 2,
        spawnedBy: 's:a',
        runtimeMs: 12_000,
        tokens: { input: 600, output: 200, total: 800 },
      }),
    ];
    expect(renderSpawnTree({ status: 'ok', action: 'list', count: 3, active: 2, subagents })).toBe(
      [
        '3 sub-agents, 2 active:',
        '├─ research · running · 40.2s',
        '│  └─ sources · done · 12.0s · 800 tokens',
        '└─ summary · queued',
      ].join('\n'),
    );
  });

  it('says when there are none, and passes a refusal on', () => {
    expect(renderSpawnTree({ status: 'ok', action: 'list', count: 0, active: 0, subagents: [] })).toMatch(
      /^No sub-agents yet/,
    );
    expect(renderSpawnTree({ status: 'forbidden', error: 'not visible' })).toBe('Not allowed: not visible');
  });
});
