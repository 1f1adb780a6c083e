import type { SessionsTreeResult, SpawnTreeNode, SpawnTreeRun, SubagentRow } from '@colloquy/core/gateway';
import { describe, expect, it } from 'vitest';
import { failedRun, nodeTotals, renderSpawnTree, renderSpawnTreeForChat } from './spawn-tree-text.js';

const ROOT = 'agent:main:main';
const run = (fields: Partial<SpawnTreeRun> = {}): SpawnTreeRun => ({
  runId: 'r',
  status: 'done',
  lane: 'subagent',
  createdAt: 0,
  startedAt: 0,
  endedAt: 1500,
  durationMs: 1500,
  usage: { inputTokens: 1200, outputTokens: 300, totalTokens: 1500 },
  toolCalls: [],
  ...fields,
});
const node = (
  key: string,
  parentKey: string | undefined,
  fields: Partial<SpawnTreeNode> = {},
): SpawnTreeNode => ({
  sessionKey: key,
  depth: parentKey === undefined ? 0 : parentKey === ROOT ? 1 : 2,
  agentId: 'main',
  kind: parentKey === undefined ? 'main' : 'subagent',
  status: 'done',
  runs: [run()],
  olderRuns: false,
  ...(parentKey === undefined ? {} : { parentKey }),
  ...fields,
});
const tree = (nodes: SpawnTreeNode[], truncated = false): SessionsTreeResult => ({
  rootKey: ROOT,
  nodes,
  truncated,
  now: 10_000,
});

describe('renderSpawnTree', () => {
  it('draws each session under its spawner with status, time, tokens, tools and announce', () => {
    const lines = renderSpawnTree(
      tree([
        node(ROOT, undefined, { runs: [run({ lane: 'main' }), run({ lane: 'main', durationMs: 500 })] }),
        node('a', ROOT, {
          label: 'research',
          runs: [
            run({
              toolCalls: [{ toolCallId: 't', name: 'echo', startedAt: 0, endedAt: 1, outcome: 'ok' }],
              announce: { to: ROOT, state: 'delivered', at: 2000 },
            }),
          ],
        }),
        node('a1', 'a', {
          label: 'deep',
          status: 'running',
          runs: [run({ status: 'running', usage: undefined })],
        }),
        node('b', ROOT, {
          label: 'broken',
          status: 'error',
          runs: [
            run({
              status: 'error',
              error: 'the model\nrefused',
              announce: { to: ROOT, state: 'pending', at: 1 },
            }),
          ],
        }),
      ]),
    );
    expect(lines).toEqual([
      'agent:main:main  done  2 runs  2.0s  2.4k in / 600 out',
      '├─ research (a)  done  1 run  1.5s  1.2k in / 300 out  1 tool  → delivered',
      '│  └─ deep (a1)  running  1 run  1.5s',
      '└─ broken (b)  error  1 run  1.5s  1.2k in / 300 out  → pending',
      '      ✗ error: the model refused',
    ]);
  });

  it('marks a failed session that has children with the line continuing to them, and says when it was cut', () => {
    const lines = renderSpawnTree(
      tree(
        [
          node(ROOT, undefined, { runs: [], status: 'idle' }),
          node('k', ROOT, {
            label: 'killed',
            status: 'killed',
            runs: [run({ status: 'killed' })],
            olderRuns: true,
          }),
          node('k1', 'k', {
            label: 'child',
            runs: [run({ announce: { to: 'k', state: 'delivered', at: 2000 } }), run()],
          }),
        ],
        true,
      ),
    );
    expect(lines).toEqual([
      'agent:main:main  idle  0 runs',
      '└─ killed (k)  killed  1+ runs  1.5s  1.2k in / 300 out',
      '   │  ✗ killed',
      '   └─ child (k1)  done  2 runs  3.0s  2.4k in / 600 out  → delivered',
      '(only the first 3 sessions of the tree)',
    ]);
  });
});

describe('nodeTotals and failedRun', () => {
  it('sums the runs and finds a failure only when the latest run failed', () => {
    const recovered = node('x', ROOT, { runs: [run({ status: 'error' }), run()] });
    expect(nodeTotals(recovered)).toEqual({
      durationMs: 3000,
      inputTokens: 2400,
      outputTokens: 600,
      toolCalls: 0,
    });
    expect(failedRun(recovered)).toBeUndefined();
    const timedOut = node('y', ROOT, { runs: [run(), run({ status: 'timeout', runId: 'late' })] });
    expect(failedRun(timedOut)?.runId).toBe('late');
  });
});

const row = (fields: Partial<SubagentRow> & Pick<SubagentRow, 'index' | 'sessionKey'>): SubagentRow => ({
  status: 'done',
  active: false,
  depth: 1,
  spawnedBy: 'main',
  ...fields,
});
const list = (subagents: SubagentRow[]) => ({
  status: 'ok' as const,
  action: 'list' as const,
  count: subagents.length,
  active: subagents.filter((r) => r.active).length,
  subagents,
});

describe('renderSpawnTreeForChat', () => {
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
      row({ index: 2, sessionKey: 's:b', task: 'sum\nit  up', status: 'queued', active: true }),
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
    expect(renderSpawnTreeForChat(list(subagents))).toBe(
      [
        '3 sub-agents, 2 active:',
        '├─ research · running · 40.2s',
        '│  └─ sources · done · 12.0s · 800 tokens',
        '└─ sum it up · queued',
      ].join('\n'),
    );
  });

  it('fits the platform’s message size: whole sub-agents only, the rest counted on the last line', () => {
    const subagents = Array.from({ length: 40 }, (_, i) =>
      row({ index: i + 1, sessionKey: `s:${i}`, label: `helper number ${i}`, runtimeMs: 1500 }),
    );
    const whole = renderSpawnTreeForChat(list(subagents));
    expect(whole.split('\n')).toHaveLength(41);
    const text = renderSpawnTreeForChat(list(subagents), { maxChars: 300 });
    expect(text.length).toBeLessThanOrEqual(300);
    const lines = text.split('\n');
    expect(lines[0]).toBe('40 sub-agents, 0 active:');
    expect(lines.slice(1, -1)).toEqual(whole.split('\n').slice(1, lines.length - 1));
    expect(lines.at(-1)).toBe(`(${41 - lines.length + 1} more not shown)`);
    // Every sub-agent is either drawn or counted.
    expect(lines.length - 2 + Number(/\d+/.exec(lines.at(-1)!)![0])).toBe(40);
    expect(renderSpawnTreeForChat(list(subagents), { maxChars: whole.length })).toBe(whole);
  });
});
