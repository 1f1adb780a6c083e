import type { SessionsTreeResult, SpawnTreeNode, SpawnTreeRun } from '@colloquy/core/gateway';
import { describe, expect, it } from 'vitest';
import { failedRun, nodeTotals, renderSpawnTree } from './spawn-tree-text.js';

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
