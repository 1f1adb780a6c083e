import { Type } from '@sinclair/typebox';
import type { RunStatus, SessionStatus } from '../interfaces/records.js';
import { type AgentTool, type ToolResult, toolResult } from '../interfaces/tool.js';
import { normalizeSessionKey } from '../keys/index.js';
import { checkSessionAccess } from '../policy/index.js';
import { subagentMetaOf } from './subagents-meta.js';
import { descendantsOf, isActive, type TreeNode } from './subagents-tree.js';
import {
  displayKey,
  failure,
  findAllowedTarget,
  gatewayFailure,
  type ToolFailure,
  type ToolScope,
} from './tool-context.js';
import { validateToolArgs } from './validate-args.js';

/** The longest steering message subagents accepts. */
export const SUBAGENTS_MAX_MESSAGE_CHARS = 32_000;

/** The parameters of `subagents` (TypeBox: JSON Schema for the model, checked at run time). */
export const SubagentsParams = Type.Object(
  {
    action: Type.Union([Type.Literal('list'), Type.Literal('steer'), Type.Literal('kill')], {
      description: '"list" your sub-agents, "steer" a running one with a message, or "kill" one.',
    }),
    target: Type.Optional(
      Type.Union([Type.String({ minLength: 1, maxLength: 512 }), Type.Integer({ minimum: 1 })], {
        description: 'For steer/kill: a sub-agent session key, runId, label, or its number from list.',
      }),
    ),
    message: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: SUBAGENTS_MAX_MESSAGE_CHARS,
        description: 'For steer: what to tell the sub-agent.',
      }),
    ),
  },
  { additionalProperties: false },
);

/** One sub-agent as `subagents list` shows it. */
export interface SubagentRow {
  /** 1-based; steer and kill accept it as `target`. */
  index: number;
  /** The sub-agent's session key in display form. */
  sessionKey: string;
  /** The sub-agent's label. */
  label?: string;
  /** The latest run's status (`queued`, `running`, `done`, ...), else the session's. */
  status: RunStatus | SessionStatus;
  /** True while its latest run is queued or running. */
  active: boolean;
  /** The id of its latest run. */
  runId?: string;
  /** Its model override (`provider/model`). */
  model?: string;
  /** `run`: one task, then it reports and ends; `session`: it stays, bound to a thread. */
  mode?: 'run' | 'session';
  /** The start of its task (at most 200 characters). */
  task?: string;
  /** 1 for your own children, 2 for theirs, ... */
  depth: number;
  /** The display key of the session that spawned it. */
  spawnedBy: string;
  /** Epoch milliseconds its latest run started. */
  startedAt?: number;
  /** Epoch milliseconds its latest run ended. */
  endedAt?: number;
  /** Milliseconds from `startedAt` to `endedAt` (or to now while running). */
  runtimeMs?: number;
  /** Tokens of its latest run (else of the session): input, output and total. */
  tokens?: { input: number; output: number; total: number };
  /** The cost of its latest run in US dollars, when priced. */
  costUsd?: number;
}

/** The results of subagents. */
export type SubagentsResult =
  | { status: 'ok'; action: 'list'; count: number; active: number; subagents: SubagentRow[] }
  | { status: 'ok'; action: 'steer'; sessionKey: string; runId: string }
  | {
      status: 'ok';
      action: 'kill';
      sessionKey: string;
      killed: { sessionKey: string; runIds: string[] }[];
      count: number;
      note?: string;
    }
  | ToolFailure;

/** Creates the `subagents` tool for one requester. */
export function createSubagentsTool(scope: ToolScope): AgentTool<typeof SubagentsParams, SubagentsResult> {
  return {
    name: 'subagents',
    description:
      'Manage the sub-agents you spawned (and theirs): list them with status, model, runtime and tokens; ' +
      'steer a running one with a message; or kill one (its own sub-agents are killed too).',
    parameters: SubagentsParams,
    execute: (_toolCallId, rawArgs) => run(scope, rawArgs),
  };
}

async function run(scope: ToolScope, rawArgs: unknown): Promise<ToolResult<SubagentsResult>> {
  const args = validateToolArgs('subagents', SubagentsParams, rawArgs);
  if (!args.ok) return failure('error', args.error);
  const { action, target, message } = args.value;
  if (action === 'list' && (target !== undefined || message !== undefined)) {
    return failure('error', 'list takes no target or message.');
  }
  if (action !== 'steer' && message !== undefined) return failure('error', 'message only goes with steer.');
  if (action !== 'list' && target === undefined) {
    return failure(
      'error',
      `${action} needs a target: a session key, runId, label or number from subagents list.`,
    );
  }
  if (action === 'steer' && (message === undefined || message.trim() === '')) {
    return failure('error', 'steer needs a message: what the sub-agent should do differently.');
  }

  let nodes: TreeNode[];
  try {
    nodes = await descendantsOf(scope.options.gateway, scope.options.requesterKey);
  } catch (error) {
    const f = gatewayFailure(error, 'Your sub-agents could not be listed.');
    return failure(f.status, f.error);
  }
  if (action === 'list') return toolResult(listResult(scope, nodes));

  const found = await findNode(scope, nodes, target!, action);
  if (!found.ok) return failure(found.failure.status, found.failure.error);
  const node = found.node;
  const decision = checkSessionAccess({
    action,
    requesterKey: scope.options.requesterKey,
    targetKey: node.session.key,
    targetAncestors: node.ancestors,
    sandboxed: scope.options.sandboxed ?? false,
    config: scope.options.config,
  });
  if (!decision.allowed) return failure('forbidden', decision.reason);
  return action === 'steer' ? steer(scope, node, message!) : kill(scope, node, nodes);
}

function listResult(scope: ToolScope, nodes: readonly TreeNode[]): SubagentsResult {
  const now = scope.now();
  const rows = nodes.map((node, i) => rowOf(scope, node, i + 1, now));
  return {
    status: 'ok',
    action: 'list',
    count: rows.length,
    active: rows.filter((r) => r.active).length,
    subagents: rows,
  };
}

function rowOf(scope: ToolScope, node: TreeNode, index: number, now: number): SubagentRow {
  const { session, latestRun: run } = node;
  const meta = subagentMetaOf(session);
  const startedAt = run?.startedAt;
  const endedAt = run?.endedAt;
  const usage = run?.usage ?? session.usage;
  const row: SubagentRow = {
    index,
    sessionKey: displayKey(scope, session.key),
    status: run?.status ?? session.status ?? 'idle',
    active: isActive(node),
    depth: node.depth,
    spawnedBy: displayKey(scope, node.ancestors[0] ?? scope.options.requesterKey),
  };
  if (session.label) row.label = session.label;
  if (run) row.runId = run.runId;
  if (session.model) row.model = session.model;
  if (meta) {
    row.mode = meta.mode;
    row.task = meta.task;
  }
  if (startedAt !== undefined) {
    row.startedAt = startedAt;
    row.runtimeMs = Math.max(0, (endedAt ?? now) - startedAt);
  }
  if (endedAt !== undefined) row.endedAt = endedAt;
  if (usage) row.tokens = { input: usage.inputTokens, output: usage.outputTokens, total: usage.totalTokens };
  if (run?.costUsd !== undefined) row.costUsd = run.costUsd;
  return row;
}

type NodeLookup = { ok: true; node: TreeNode } | { ok: false; failure: ToolFailure };

/** Finds the target among the caller's descendants: list number, key, sessionId, runId, or label. */
async function findNode(
  scope: ToolScope,
  nodes: readonly TreeNode[],
  target: string | number,
  action: 'steer' | 'kill',
): Promise<NodeLookup> {
  const text = String(target).trim();
  if (typeof target === 'number' || /^\d+$/.test(text)) {
    const index = Number(text);
    const node = nodes[index - 1];
    if (node) return { ok: true, node };
    return {
      ok: false,
      failure: {
        status: 'error',
        error: `There is no sub-agent #${index}: subagents list shows ${nodes.length}. List them again, then pass a number from it.`,
      },
    };
  }
  const key = normalizeSessionKey(text);
  const byKey = nodes.find(
    (n) => n.session.key === key || n.session.sessionId === text || n.latestRun?.runId === text,
  );
  if (byKey) return { ok: true, node: byKey };
  const labelled = nodes.filter((n) => n.session.label === text);
  if (labelled.length === 1) return { ok: true, node: labelled[0]! };
  if (labelled.length > 1) {
    return {
      ok: false,
      failure: {
        status: 'error',
        error: `${labelled.length} sub-agents are labelled "${text}"; pass a session key or list number instead.`,
      },
    };
  }
  // Not one of the caller's sub-agents: let the guard say why (or that it does not exist).
  const outside = await findAllowedTarget(scope, text, action);
  if (!outside.ok) return outside;
  return {
    ok: false,
    failure: {
      status: 'error',
      error: `"${text}" is not an active or recent sub-agent of this session (it may be archived); use subagents list.`,
    },
  };
}

async function steer(
  scope: ToolScope,
  node: TreeNode,
  message: string,
): Promise<ToolResult<SubagentsResult>> {
  const shown = displayKey(scope, node.session.key);
  if (!isActive(node)) {
    return failure(
      'error',
      `${shown} is not running (status ${node.latestRun?.status ?? node.session.status ?? 'idle'}), so there is nothing to steer; its result was announced. Spawn a new sub-agent for new work.`,
    );
  }
  try {
    const steered = await scope.options.gateway.call('agent', {
      sessionKey: node.session.key,
      message,
      steer: true,
      provenance: {
        kind: 'inter_session',
        sourceSessionKey: scope.options.requesterKey,
        sourceTool: 'subagents',
      },
    });
    return toolResult({ status: 'ok', action: 'steer', sessionKey: shown, runId: steered.runId });
  } catch (error) {
    const f = gatewayFailure(error, 'The message could not be passed on.');
    return failure(f.status, f.error);
  }
}

async function kill(
  scope: ToolScope,
  node: TreeNode,
  nodes: readonly TreeNode[],
): Promise<ToolResult<SubagentsResult>> {
  const shown = displayKey(scope, node.session.key);
  const requester = displayKey(scope, scope.options.requesterKey);
  // The target first, then its descendants from the top down (`nodes` is breadth first): a killed
  // session is never woken by the killed announces of the sessions below it, nor spawns anew.
  const below = nodes.filter((n) => n.ancestors.includes(node.session.key));
  const killed: { sessionKey: string; runIds: string[] }[] = [];
  let count = 0;
  for (const victim of [node, ...below]) {
    const reason =
      victim === node
        ? `Killed by ${requester} with subagents kill.`
        : `Killed because its ancestor ${shown} was killed by ${requester}.`;
    try {
      const { aborted } = await scope.options.gateway.call('agent.abort', {
        sessionKey: victim.session.key,
        reason,
      });
      if (aborted.length > 0) {
        killed.push({ sessionKey: displayKey(scope, victim.session.key), runIds: aborted });
        count += aborted.length;
      }
    } catch (error) {
      const f = gatewayFailure(error, `Stopping ${displayKey(scope, victim.session.key)} failed.`);
      return failure(f.status, f.error);
    }
  }
  return toolResult({
    status: 'ok',
    action: 'kill',
    sessionKey: shown,
    killed,
    count,
    ...(count === 0 ? { note: `${shown} and its sub-agents had no active run; nothing was stopped.` } : {}),
  });
}
