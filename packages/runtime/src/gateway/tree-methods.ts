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
import { type RunRecord, type SessionRecord, TERMINAL_RUN_STATUSES } from '@colloquy/core/store';
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
 * errors, tool calls and announces. Reads only; no visibility filter (like `sessions.list`).
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
  // One more than fits tells whether the tree was cut.
  const below = await descendantsOf(ctx.gateway, root.key, maxNodes);
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
  const nodes = await Promise.all(
    sessions.map(async ({ session, parentKey, depth }) => {
      const { runs, olderRuns } = await runsOf(ctx, session.key, runsPerNode, now, redact);
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
    }),
  );
  return { rootKey: root.key, nodes, truncated, now };
}

/** The session's status, `running` while its newest run runs (the record says so only once it ends). */
function statusOf(session: SessionRecord, runs: readonly SpawnTreeRun[]): SessionStatus {
  return runs.at(-1)?.status === 'running' ? 'running' : (session.status ?? 'idle');
}

async function runsOf(
  ctx: RuntimeContext,
  sessionKey: string,
  limit: number,
  now: number,
  redact: Redactor,
): Promise<{ runs: SpawnTreeRun[]; olderRuns: boolean }> {
  const newestFirst = await ctx.store.listRuns({ sessionKey, limit: limit + 1 });
  const records = newestFirst.slice(0, limit).reverse();
  if (records.length === 0) return { runs: [], olderRuns: false };
  const byId = new Map(records.map((run) => [run.runId, run]));
  const tail = await ctx.store.readTail(sessionKey, TREE_TRANSCRIPT_TAIL);
  const calls = toolCallsByRun(tail, byId);
  const runs = await Promise.all(
    records.map(async (run) => toTreeRun(ctx, run, calls.get(run.runId) ?? [], now, redact)),
  );
  return { runs, olderRuns: newestFirst.length > limit };
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
