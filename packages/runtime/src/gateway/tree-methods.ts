import type {
  GatewayResult,
  SessionStatus,
  SpawnTreeNode,
  SpawnTreeRun,
  SpawnTreeToolCall,
} from '@colloquy/core/gateway';
import {
  configuredSecrets,
  createRedactor,
  descendantsOf,
  type Redactor,
  truncateText,
} from '@colloquy/core/internal';
import { batchReads, type RunRecord, type SessionRecord, TERMINAL_RUN_STATUSES } from '@colloquy/core/store';
import type { RuntimeContext } from '../runtime/runtime-context.js';
import { readParams } from './params.js';
import { requireSession } from './resolve-session.js';
import { toRunSummary } from './sessions-methods.js';
import { announceOf, toolCallsByRun } from './tree-run-details.js';

/** Default and most sessions `sessions.tree` returns, the root included. */
const TREE_MAX_NODES = 1000;
/** Runs per session when `runsPerNode` is not given. */
const TREE_DEFAULT_RUNS = 20;
/** The most runs per session. */
const TREE_MAX_RUNS = 100;
/** How many of a session's latest transcript messages are read for its runs' tool calls. */
const TREE_TRANSCRIPT_TAIL = 200;
/** The longest error text returned per run. */
const TREE_ERROR_CHARS = 1000;

/**
 * `sessions.tree`: the spawn tree below a session, the root first, then breadth first and oldest
 * spawn first (core's `descendantsOf`, as the `subagents` tool walks it), at most `maxNodes` with
 * `truncated` when there were more. Per session its newest runs with durations, tokens, redacted
 * errors, tool calls and announces. Reads only; no visibility filter (like `sessions.list`). The
 * store work grows with the tree's depth, not its size: a list per level, then the runs and the
 * transcript tails of every node in a batch each (plus an outbox read per sub-agent run whose
 * announce is not settled yet).
 *
 * @throws `SESSION_NOT_FOUND` for an unknown root; `INVALID_ARGUMENT` for a bad number
 */
export async function sessionsTree(
  ctx: RuntimeContext,
  params: unknown,
): Promise<GatewayResult<'sessions.tree'>> {
  const p = readParams('sessions.tree', params);
  p.only(['key', 'maxNodes', 'runsPerNode']);
  const root = await requireSession(ctx.store, ctx.config, p.string('key'));
  const maxNodes = Math.floor(p.optionalNumber('maxNodes', 1, TREE_MAX_NODES) ?? TREE_MAX_NODES);
  const runsPerNode = Math.floor(p.optionalNumber('runsPerNode', 1, TREE_MAX_RUNS) ?? TREE_DEFAULT_RUNS);
  // One more than fits tells whether the tree was cut. The walk reads no runs: they are read
  // below, for every node at once.
  const below = await descendantsOf(ctx.gateway, root.key, maxNodes, { latestRuns: false });
  const truncated = below.length > maxNodes - 1;
  const sessions: Array<{ session: SessionRecord; parentKey?: string; depth: number }> = [
    { session: root, depth: 0 },
    ...below.slice(0, maxNodes - 1).map((node) => ({
      session: node.session,
      parentKey: node.ancestors[0]!,
      depth: node.depth,
    })),
  ];
  const now = ctx.clock.now();
  const redact = createRedactor(configuredSecrets(ctx.config));
  const runsBySession = await runsOf(
    ctx,
    sessions.map(({ session }) => session.key),
    runsPerNode,
    now,
    redact,
  );
  const nodes = sessions.map(({ session, parentKey, depth }, i): SpawnTreeNode => {
    const { runs, olderRuns } = runsBySession[i]!;
    const node: SpawnTreeNode = {
      sessionKey: session.key,
      depth,
      agentId: session.agentId,
      kind: session.kind,
      status: statusOf(session, runs),
      runs,
      olderRuns,
    };
    if (parentKey !== undefined) node.parentKey = parentKey;
    if (session.label !== undefined) node.label = session.label;
    return node;
  });
  return { rootKey: root.key, nodes, truncated, now };
}

/** The session's status, `running` while its newest run runs (the record says so only once it ends). */
function statusOf(session: SessionRecord, runs: readonly SpawnTreeRun[]): SessionStatus {
  return runs.at(-1)?.status === 'running' ? 'running' : (session.status ?? 'idle');
}

/**
 * The newest `limit` runs of each session (entry `i` for `sessionKeys[i]`), oldest first, with
 * their tool calls: one batched read of the runs and one of the transcript tails (of the sessions
 * that ran), whatever the number of sessions.
 */
async function runsOf(
  ctx: RuntimeContext,
  sessionKeys: readonly string[],
  limit: number,
  now: number,
  redact: Redactor,
): Promise<Array<{ runs: SpawnTreeRun[]; olderRuns: boolean }>> {
  const reads = batchReads(ctx.store);
  const newestFirst = await reads.listRunsOfSessions(sessionKeys, limit + 1);
  const ran = sessionKeys.filter((_, i) => newestFirst[i]!.length > 0);
  const tails = ran.length > 0 ? await reads.readTails(ran, TREE_TRANSCRIPT_TAIL) : [];
  const tailOf = new Map(ran.map((key, i) => [key, tails[i]!]));
  return Promise.all(
    sessionKeys.map(async (sessionKey, i) => {
      const records = newestFirst[i]!.slice(0, limit).reverse();
      if (records.length === 0) return { runs: [], olderRuns: false };
      const byId = new Map(records.map((run) => [run.runId, run]));
      const calls = toolCallsByRun(tailOf.get(sessionKey) ?? [], byId);
      const runs = await Promise.all(
        records.map(async (run) => toTreeRun(ctx, run, calls.get(run.runId) ?? [], now, redact)),
      );
      return { runs, olderRuns: newestFirst[i]!.length > limit };
    }),
  );
}

async function toTreeRun(
  ctx: RuntimeContext,
  run: RunRecord,
  toolCalls: SpawnTreeToolCall[],
  now: number,
  redact: Redactor,
): Promise<SpawnTreeRun> {
  const out: SpawnTreeRun = { ...toRunSummary(run), toolCalls };
  if (run.startedAt !== undefined) out.durationMs = Math.max(0, (run.endedAt ?? now) - run.startedAt);
  if (run.error !== undefined) out.error = truncateText(redact(run.error).text, TREE_ERROR_CHARS).text;
  if (run.spawnedBy !== undefined && TERMINAL_RUN_STATUSES.includes(run.status)) {
    // A settled announce is recorded on the run; only a run without one needs its outbox row.
    const outbox = run.announce ? undefined : await ctx.store.getOutbox(run.sessionKey, run.runId);
    const announce = announceOf(run, outbox);
    if (announce) out.announce = announce;
  }
  return out;
}
