import type { SessionsTreeResult } from '@colloquy/core/gateway';
import { createGatewayClient, type GatewayClient } from '@colloquy/runtime';
import {
  type FakeReply,
  type OpenAIFake,
  type RecordedRequest,
  startOpenAIFake,
} from '@colloquy/testkit/openai-fake';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AppProcess, runCliProcess, startApp } from './support/app-process.js';

const spawn = (task: string, label: string) => ({ name: 'sessions_spawn', arguments: { task, label } });

/**
 * The fake model builds a spawn tree of depth 2 with 5 sub-agents: the main session spawns a
 * coordinator, a researcher and one that fails in the model; the coordinator spawns a researcher and
 * a crawler that works for a minute (the test kills it). Announce turns answer "Noted."
 */
function script(request: RecordedRequest): FakeReply {
  const messages = request.body.messages as { role: string; content: unknown }[];
  const users = messages.filter((m) => m.role === 'user').map((m) => textOf(m.content));
  const task = users[0] ?? '';
  const last = messages.at(-1);
  const firstTurn = last?.role === 'user' && users.length === 1;
  if (task.includes('build the tree')) {
    if (last?.role === 'tool') return { text: 'Helpers started.' };
    if (firstTurn) {
      return {
        toolCalls: [
          spawn('coordinate the trip', 'coordinator'),
          spawn('research the trains', 'trains'),
          spawn('fail on purpose', 'flaky'),
        ],
      };
    }
    return { text: 'Noted.' };
  }
  if (task.includes('coordinate')) {
    if (last?.role === 'tool') return { text: 'Coordinating.' };
    if (firstTurn) {
      return {
        toolCalls: [spawn('research the hotels', 'hotels'), spawn('crawl every hotel site', 'crawler')],
      };
    }
    return { text: 'Noted.' };
  }
  if (task.includes('research')) return { text: 'Found it.', delayMs: 200 };
  if (task.includes('fail')) return { status: 400, errorMessage: 'the model refused the task' };
  if (task.includes('crawl')) return { text: 'Crawled.', delayMs: 60_000 };
  return { text: 'Noted.' };
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part) => (part as { text?: string }).text ?? '').join('');
  return '';
}

describe('colloquy tree on a spawn tree of depth 2 with 5 sub-agents, one failing and one killed', () => {
  let fake: OpenAIFake;
  let app: AppProcess;
  let client: GatewayClient;
  const cli = (...args: string[]) => runCliProcess([...args, '--state-dir', 'state'], { cwd: app.dir });

  beforeAll(async () => {
    fake = await startOpenAIFake(script);
    app = await startApp(
      {
        agents: { defaults: { subagents: { maxSpawnDepth: 2 } } },
        tools: { subagents: { tools: { allow: ['sessions_spawn'] } } },
      },
      { COLLOQUY_MODEL: 'fake/test-model', OPENAI_BASE_URL: fake.baseURL },
    );
    client = createGatewayClient({ url: app.gatewayUrl, token: app.token, reconnect: false });
    await client.ready();
  }, 30_000);

  afterAll(async () => {
    await client?.close();
    await app?.cleanup();
    await fake?.close();
  });

  /** Polls `sessions.tree` of the main session until `done` says so. */
  async function treeUntil(done: (tree: SessionsTreeResult) => boolean): Promise<SessionsTreeResult> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const tree = await client.call('sessions.tree', { key: 'main' });
      if (done(tree)) return tree;
      if (Date.now() > deadline) throw new Error(`the tree never settled: ${JSON.stringify(tree.nodes)}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  it('prints every sub-agent under its spawner with status, time and tokens, failures marked', {
    timeout: 60_000,
  }, async () => {
    const sent = await cli('sessions', 'send', 'main', 'build the tree');
    expect(sent.code).toBe(0);
    const byLabel = (tree: SessionsTreeResult, label: string) => tree.nodes.find((n) => n.label === label);
    const running = await treeUntil((tree) => byLabel(tree, 'crawler')?.runs.at(-1)?.status === 'running');
    await client.call('agent.abort', { sessionKey: byLabel(running, 'crawler')!.sessionKey });
    const settled = await treeUntil(
      (tree) =>
        tree.nodes.length === 6 &&
        tree.nodes.every((node) => {
          const latest = node.runs.at(-1);
          return (
            latest !== undefined &&
            !['queued', 'running'].includes(latest.status) &&
            (node.depth === 0 || node.runs[0]?.announce?.state === 'delivered')
          );
        }),
    );
    expect(settled.nodes.map((node) => [node.label, node.depth])).toEqual([
      [undefined, 0],
      ['coordinator', 1],
      ['trains', 1],
      ['flaky', 1],
      ['hotels', 2],
      ['crawler', 2],
    ]);

    const run = await cli('tree', 'main');
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    const facts = String.raw` {2}\d+ runs? {2}[\d.]+m?s(?: {2}\S+ in / \S+ out)?`;
    expect(lines).toHaveLength(8);
    expect(lines[0]).toMatch(new RegExp(String.raw`^agent:main:main {2}\w+${facts} {2}3 tools$`));
    expect(lines[1]).toMatch(
      new RegExp(
        String.raw`^├─ coordinator \(agent:main:subagent:\S+\) {2}done${facts} {2}2 tools {2}→ delivered$`,
      ),
    );
    expect(lines[2]).toMatch(new RegExp(String.raw`^│  ├─ hotels \(\S+\) {2}done${facts} {2}→ delivered$`));
    expect(lines[3]).toMatch(
      new RegExp(String.raw`^│  └─ crawler \(\S+\) {2}killed${facts} {2}→ delivered$`),
    );
    expect(lines[4]).toMatch(/^│ {8}✗ killed: The run was aborted\.$/);
    expect(lines[5]).toMatch(new RegExp(String.raw`^├─ trains \(\S+\) {2}done${facts} {2}→ delivered$`));
    expect(lines[6]).toMatch(new RegExp(String.raw`^└─ flaky \(\S+\) {2}error${facts} {2}→ delivered$`));
    expect(lines[7]).toMatch(/^ {6}✗ error: .*the model refused the task/);

    const runs = await cli('runs', settled.nodes.find((n) => n.label === 'crawler')!.sessionKey);
    expect(runs.stdout).toMatch(/^RUN\s+STATUS/);
    expect(runs.stdout.split('\n')[1]).toMatch(/^\S{8}\s+killed\s+(just now|\d+s ago)\s+[\d.]+m?s\s/);
  });
});
