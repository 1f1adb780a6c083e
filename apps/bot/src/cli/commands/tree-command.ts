import { ColloquyError } from '@colloquy/core';
import type { SpawnTreeRun } from '@colloquy/core/gateway';
import { renderSpawnTree } from '../../format/spawn-tree-text.js';
import { compactCount, duration, oneLine, timeAgo } from '../../format/units.js';
import { type CliIo, writeLines } from '../cli-io.js';
import { CLI } from '../cli-name.js';
import { connectGateway } from '../connect.js';
import { GATEWAY_FLAGS, parseFlags } from '../parse-flags.js';
import { renderTable } from '../render-table.js';
import { connectFlags, explainMissing, wholeNumber } from './sessions-command.js';

/** The most sessions `colloquy tree` asks for (the gateway's cap). */
const MAX_NODES = 1000;
/** The most runs per session the gateway returns. */
const MAX_RUNS = 100;
/** The longest error shown in the runs table. */
const ERROR_CHARS = 60;

/**
 * `colloquy tree <session>`: the spawn tree below a session as indented text, each session with
 * its status, run time and tokens, failures marked; `--json` prints the `sessions.tree` result.
 *
 * @param args - arguments after `tree`
 * @param io - streams and environment
 * @returns the exit code
 * @throws ColloquyError `INVALID_ARGUMENT` for a missing session or a bad flag
 */
export async function treeCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags(args, { ...GATEWAY_FLAGS, runs: { type: 'string' } }, 'tree');
  const [key] = positionals;
  if (!key || positionals.length > 1) {
    throw new ColloquyError('INVALID_ARGUMENT', `Usage: ${CLI} tree <session> [--runs n]`);
  }
  const runsPerNode = wholeNumber(values.runs, 20, '--runs', 1, MAX_RUNS);
  const { client } = await connectGateway(connectFlags(values), io);
  try {
    const tree = await client
      .call('sessions.tree', { key, maxNodes: MAX_NODES, runsPerNode })
      .catch(explainMissing(key));
    writeLines(io.out, values.json ? JSON.stringify(tree, null, 2) : renderSpawnTree(tree).join('\n'));
    return 0;
  } finally {
    await client.close();
  }
}

/**
 * `colloquy runs <session>`: the session's newest runs as a table (status, when, duration, tokens,
 * tool calls, announce, error), oldest first; `--json` prints them as `sessions.tree` returns them.
 *
 * @param args - arguments after `runs`
 * @param io - streams and environment
 * @returns the exit code
 * @throws ColloquyError `INVALID_ARGUMENT` for a missing session or a bad flag
 */
export async function runsCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags(
    args,
    { ...GATEWAY_FLAGS, limit: { type: 'string', short: 'n' } },
    'runs',
  );
  const [key] = positionals;
  if (!key || positionals.length > 1) {
    throw new ColloquyError('INVALID_ARGUMENT', `Usage: ${CLI} runs <session> [--limit n]`);
  }
  const limit = wholeNumber(values.limit, 20, '--limit', 1, MAX_RUNS);
  const { client } = await connectGateway(connectFlags(values), io);
  try {
    const tree = await client
      .call('sessions.tree', { key, maxNodes: 1, runsPerNode: limit })
      .catch(explainMissing(key));
    const node = tree.nodes[0]!;
    if (values.json) {
      writeLines(io.out, JSON.stringify({ sessionKey: node.sessionKey, runs: node.runs }, null, 2));
      return 0;
    }
    if (node.runs.length === 0) {
      writeLines(io.out, `${node.sessionKey} has no runs yet.`);
      return 0;
    }
    writeLines(
      io.out,
      renderTable(
        ['RUN', 'STATUS', 'STARTED', 'DURATION', 'IN', 'OUT', 'TOOLS', 'ANNOUNCE', 'ERROR'],
        node.runs.map((run) => runRow(run, tree.now)),
      ),
    );
    if (node.olderRuns) writeLines(io.out, `(the newest ${node.runs.length}; older runs: --limit)`);
    return 0;
  } finally {
    await client.close();
  }
}

function runRow(run: SpawnTreeRun, now: number): string[] {
  return [
    run.runId.slice(0, 8),
    run.status,
    timeAgo(run.startedAt ?? run.createdAt, now),
    run.durationMs === undefined ? '-' : duration(run.durationMs),
    run.usage ? compactCount(run.usage.inputTokens) : '-',
    run.usage ? compactCount(run.usage.outputTokens) : '-',
    String(run.toolCalls.length),
    run.announce?.state ?? '-',
    run.error ? oneLine(run.error, ERROR_CHARS) : '',
  ];
}
