import type { SessionsTreeResult, SpawnTreeNode } from '@colloquy/core/gateway';
import type { GatewayClient } from '@colloquy/runtime';
import type { FakeReply, RecordedRequest } from '@colloquy/testkit/openai-fake';

/** What a chat says to the model of {@link spawnTreeScript} to make it build the tree. */
export const BUILD_THE_TREE = 'build the tree';

/** The app config the tree needs: sub-agents may spawn their own (depth 2) and only spawn. */
export const SPAWN_TREE_CONFIG = {
  agents: { defaults: { subagents: { maxSpawnDepth: 2 } } },
  tools: { subagents: { tools: { allow: ['sessions_spawn'] } } },
};

const spawn = (task: string, label: string) => ({ name: 'sessions_spawn', arguments: { task, label } });

/**
 * The OpenAI fake's script of a spawn tree of depth 2 with 5 sub-agents: the session told
 * {@link BUILD_THE_TREE} spawns a coordinator, a researcher (`trains`) and one that fails in the
 * model with HTTP 400 (`flaky`); the coordinator spawns a researcher (`hotels`) and a `crawler`
 * that works for a minute (its test kills it). Announce turns answer "Noted."
 *
 * @param request - the request the fake received
 * @returns the fake's reply
 */
export function spawnTreeScript(request: RecordedRequest): FakeReply {
  const messages = request.body.messages as { role: string; content: unknown }[];
  const users = messages.filter((m) => m.role === 'user').map((m) => textOf(m.content));
  const task = users[0] ?? '';
  const last = messages.at(-1);
  const firstTurn = last?.role === 'user' && users.length === 1;
  if (task.includes(BUILD_THE_TREE)) {
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

/** The tree's node labelled `label`. */
export function nodeLabelled(tree: SessionsTreeResult, label: string): SpawnTreeNode | undefined {
  return tree.nodes.find((node) => node.label === label);
}

/**
 * Polls `sessions.tree` of `key` every 200 ms until `done` holds; throws with the last nodes after 20 s.
 *
 * @param client - a gateway client of the app
 * @param key - the tree's root session
 * @param done - when to stop
 * @returns the tree that satisfied `done`
 */
export async function treeUntil(
  client: GatewayClient,
  key: string,
  done: (tree: SessionsTreeResult) => boolean,
): Promise<SessionsTreeResult> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const tree = await client.call('sessions.tree', { key });
    if (done(tree)) return tree;
    if (Date.now() > deadline) throw new Error(`the tree never settled: ${JSON.stringify(tree.nodes)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * Runs the tree of {@link spawnTreeScript} below `key` to its end: kills the crawler once it runs
 * (and `beforeKill` resolved), then waits until all 6 sessions ended their latest run and every
 * sub-agent's announce was delivered.
 *
 * @param client - a gateway client of the app
 * @param key - the session told {@link BUILD_THE_TREE}
 * @param beforeKill - what to wait for while the crawler runs, before it is killed
 * @returns the settled tree
 */
export async function runSpawnTreeToEnd(
  client: GatewayClient,
  key: string,
  beforeKill?: () => Promise<unknown>,
): Promise<SessionsTreeResult> {
  const running = await treeUntil(
    client,
    key,
    (tree) => nodeLabelled(tree, 'crawler')?.runs.at(-1)?.status === 'running',
  );
  await beforeKill?.();
  await client.call('agent.abort', { sessionKey: nodeLabelled(running, 'crawler')!.sessionKey });
  return treeUntil(
    client,
    key,
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
}
