import { createGatewayClient, type GatewayClient } from '@colloquy/runtime';
import { type OpenAIFake, startOpenAIFake } from '@colloquy/testkit/openai-fake';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AppProcess, runCliProcess, startApp } from './support/app-process.js';
import {
  BUILD_THE_TREE,
  runSpawnTreeToEnd,
  SPAWN_TREE_CONFIG,
  spawnTreeScript,
} from './support/spawn-tree.js';

describe('colloquy tree on a spawn tree of depth 2 with 5 sub-agents, one failing and one killed', () => {
  let fake: OpenAIFake;
  let app: AppProcess;
  let client: GatewayClient;
  const cli = (...args: string[]) => runCliProcess([...args, '--state-dir', 'state'], { cwd: app.dir });

  beforeAll(async () => {
    fake = await startOpenAIFake(spawnTreeScript);
    app = await startApp(SPAWN_TREE_CONFIG, {
      COLLOQUY_MODEL: 'fake/test-model',
      OPENAI_BASE_URL: fake.baseURL,
    });
    client = createGatewayClient({ url: app.gatewayUrl, token: app.token, reconnect: false });
    await client.ready();
  }, 30_000);

  afterAll(async () => {
    await client?.close();
    await app?.cleanup();
    await fake?.close();
  });

  it('prints every sub-agent under its spawner with status, time and tokens, failures marked', {
    timeout: 60_000,
  }, async () => {
    const sent = await cli('sessions', 'send', 'main', BUILD_THE_TREE);
    expect(sent.code).toBe(0);
    const settled = await runSpawnTreeToEnd(client, 'main');
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
