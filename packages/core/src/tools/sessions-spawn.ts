import { Type } from '@sinclair/typebox';
import { agentConfigFor } from '../config/index.js';
import { forkHistory } from '../history/index.js';
import type { AgentRunParams, AgentSessionInit, AttachmentReceipt } from '../interfaces/gateway.js';
import type { SessionRecord } from '../interfaces/records.js';
import { type AgentTool, type ToolResult, toolResult } from '../interfaces/tool.js';
import { subagentSessionKey } from '../keys/index.js';
import { agentToAgentAdmits } from '../policy/index.js';
import { spawnableAgents } from './agents-list.js';
import { checkAttachments } from './attachments.js';
import { clampInt, dropNonFinite } from './sessions-list.js';
import { SUBAGENT_META_KEY, type SubagentMeta, subagentSystemPrompt } from './subagents-meta.js';
import { childrenOf, isActive } from './subagents-tree.js';
import { configuredSecrets, displayKey, failure, gatewayFailure, type ToolScope } from './tool-context.js';
import { validateToolArgs } from './validate-args.js';

/** The longest task sessions_spawn accepts. */
export const SESSIONS_SPAWN_MAX_TASK_CHARS = 32_000;
/** The longest run timeout sessions_spawn accepts (one day). */
export const SESSIONS_SPAWN_MAX_TIMEOUT_SECONDS = 86_400;

const Attachment = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255, description: 'A plain file name (no folders).' }),
    content: Type.String({ description: 'The file content: text, or base64 with encoding "base64".' }),
    encoding: Type.Optional(Type.Union([Type.Literal('utf8'), Type.Literal('base64')])),
    mimeType: Type.Optional(Type.String({ minLength: 3, maxLength: 255 })),
  },
  { additionalProperties: false },
);

/** The parameters of `sessions_spawn` (TypeBox: JSON Schema for the model, checked at run time). */
export const SessionsSpawnParams = Type.Object(
  {
    task: Type.String({
      minLength: 1,
      maxLength: SESSIONS_SPAWN_MAX_TASK_CHARS,
      description: 'What the sub-agent should do. It becomes its first message.',
    }),
    label: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'A short name to find it by later.' }),
    ),
    agentId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'The agent to run it as (see agents_list; default: yours).',
      }),
    ),
    model: Type.Optional(
      Type.String({
        minLength: 3,
        maxLength: 200,
        description: 'A model "provider/model" (default: the agent’s).',
      }),
    ),
    thinking: Type.Optional(Type.String({ minLength: 1, maxLength: 32, description: 'A thinking level.' })),
    runTimeoutSeconds: Type.Optional(
      Type.Number({ minimum: 0, description: 'Stop the run after this many seconds (0 = no limit).' }),
    ),
    thread: Type.Optional(
      Type.Boolean({ description: 'Give it its own thread in this chat (default false).' }),
    ),
    mode: Type.Optional(
      Type.Union([Type.Literal('run'), Type.Literal('session')], {
        description: '"run": one task then it ends (default); "session": it stays (needs thread=true).',
      }),
    ),
    cleanup: Type.Optional(
      Type.Union([Type.Literal('delete'), Type.Literal('keep')], {
        description: '"keep" (default): archived later; "delete": removed once its result is announced.',
      }),
    ),
    sandbox: Type.Optional(
      Type.Union([Type.Literal('inherit'), Type.Literal('require')], {
        description: '"require": refuse unless the sub-agent runs sandboxed (default "inherit").',
      }),
    ),
    context: Type.Optional(
      Type.Union([Type.Literal('isolated'), Type.Literal('fork')], {
        description:
          '"isolated" (default): the sub-agent sees only its task; "fork": it also inherits your recent history (sanitised, at most 20 messages or 40 KiB).',
      }),
    ),
    attachments: Type.Optional(Type.Array(Attachment, { maxItems: 1000 })),
    attachAs: Type.Optional(
      Type.Object(
        {
          mountPath: Type.Optional(
            Type.String({ minLength: 1, maxLength: 512, description: 'Where the sub-agent sees the files.' }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

/** The results of sessions_spawn. */
export type SessionsSpawnResult =
  | {
      status: 'accepted';
      runId: string;
      childSessionKey: string;
      /** The model the child really runs. */
      model: string;
      mode: 'run' | 'session';
      cleanup: 'delete' | 'keep';
      label?: string;
      threadId?: string;
      attachments?: AttachmentReceipt;
      /** With `context: "fork"`: how many of your messages the child inherited. */
      inherited?: { messages: number; redacted: boolean; dropped: number };
    }
  | { status: 'error' | 'forbidden'; error: string };

/** Creates the `sessions_spawn` tool for one requester. */
export function createSessionsSpawnTool(
  scope: ToolScope,
): AgentTool<typeof SessionsSpawnParams, SessionsSpawnResult> {
  return {
    name: 'sessions_spawn',
    description:
      'Start a sub-agent on a task in the background and return at once. Its result is announced to you ' +
      '(and your chat) when it ends: do not poll for it. Use subagents to list, steer or kill your sub-agents.',
    parameters: SessionsSpawnParams,
    execute: (_toolCallId, rawArgs) => spawn(scope, rawArgs),
  };
}

async function spawn(scope: ToolScope, rawArgs: unknown): Promise<ToolResult<SessionsSpawnResult>> {
  const args = validateToolArgs(
    'sessions_spawn',
    SessionsSpawnParams,
    dropNonFinite(rawArgs, ['runTimeoutSeconds']),
  );
  if (!args.ok) return failure('error', args.error);
  const a = args.value;
  const { config, gateway, requesterKey } = scope.options;
  if (a.task.trim() === '') return failure('error', 'task is empty; say what the sub-agent should do.');

  // --- mode and thread ---
  const thread = a.thread ?? false;
  const mode = a.mode ?? (thread ? 'session' : 'run');
  if (mode === 'session' && !thread) {
    return failure(
      'error',
      'mode "session" needs thread=true: a session-mode sub-agent lives in its own thread. Pass thread=true, or use mode "run".',
    );
  }
  const cleanup = a.cleanup ?? 'keep';

  // --- who spawns: depth and active children ---
  let caller: SessionRecord;
  try {
    ({ session: caller } = await gateway.call('sessions.resolve', { key: requesterKey }));
  } catch (error) {
    const f = gatewayFailure(error, 'Your own session could not be read.');
    return failure(f.status, f.error);
  }
  const callerAgent = agentConfigFor(config, scope.options.agentId);
  const depth = caller.spawnDepth ?? 0;
  const { maxSpawnDepth, maxChildrenPerAgent } = callerAgent.subagents;
  if (depth >= maxSpawnDepth) {
    return failure(
      'forbidden',
      depth === 0
        ? `Spawning is off: agents.defaults.subagents.maxSpawnDepth is ${maxSpawnDepth}.`
        : `This session is a sub-agent at depth ${depth}, and agents.defaults.subagents.maxSpawnDepth is ${maxSpawnDepth}: a sub-agent this deep cannot spawn. Do the work yourself.`,
    );
  }
  let active: number;
  try {
    active = (await childrenOf(scope.options.gateway, requesterKey)).filter(isActive).length;
  } catch (error) {
    const f = gatewayFailure(error, 'Your sub-agents could not be counted.');
    return failure(f.status, f.error);
  }
  if (active >= maxChildrenPerAgent) {
    return failure(
      'forbidden',
      `You already have ${active} active sub-agents, the limit (agents.defaults.subagents.maxChildrenPerAgent = ${maxChildrenPerAgent}). Wait for their results (they announce themselves), or stop one with subagents kill.`,
    );
  }

  // --- which agent, sandboxing, model ---
  const targetId = a.agentId?.trim().toLowerCase() || scope.options.agentId;
  const allowed = spawnableAgents(config, scope.options.agentId);
  if (!allowed.some((agent) => agent.id === targetId)) {
    const configured = config.agents.list.some((agent) => agent.id === targetId);
    const ids = allowed.map((agent) => agent.id).join(', ');
    return configured
      ? failure(
          'forbidden',
          `Agent "${scope.options.agentId}" may not spawn sub-agents as "${targetId}": it is not in agents.list[].subagents.allowAgents. Agents you may use: ${ids}.`,
        )
      : failure('error', `There is no agent "${targetId}" in agents.list. Agents you may use: ${ids}.`);
  }
  const target = agentConfigFor(config, targetId);
  if ((scope.options.sandboxed ?? false) && !target.sandboxed) {
    return failure(
      'forbidden',
      `This session runs sandboxed and agent "${targetId}" does not: a sandboxed session cannot start an unsandboxed sub-agent.`,
    );
  }
  if (a.sandbox === 'require' && !target.sandboxed) {
    return failure(
      'forbidden',
      `sandbox "require" was asked, but agent "${targetId}" does not run sandboxed (agents.list[].sandboxed).`,
    );
  }
  const model = a.model?.trim() || target.model || config.agents.defaults.model;
  if (!model) {
    return failure(
      'error',
      `No model is configured for agent "${targetId}"; pass model ("provider/model") or set agents.defaults.model.`,
    );
  }

  // --- attachments: every check before anything is written ---
  const attachmentConfig = config.tools.sessions_spawn.attachments;
  if (a.attachments && a.attachments.length > 0) {
    if (!attachmentConfig.enabled) {
      return failure(
        'forbidden',
        'Attachments are turned off (tools.sessions_spawn.attachments.enabled is false); put the content in the task instead.',
      );
    }
    const checked = checkAttachments(a.attachments, attachmentConfig);
    if (!checked.ok) return failure('error', checked.error);
  } else if (a.attachAs !== undefined) {
    return failure('error', 'attachAs only goes with attachments.');
  }

  // --- fork: the requester's recent history, sanitised ---
  let inherited: ReturnType<typeof forkHistory> | undefined;
  if (a.context === 'fork') {
    // A fork copies this session's history into the child: into another agent's session only
    // where agent-to-agent admits both (spec section 11).
    if (targetId !== scope.options.agentId && !agentToAgentAdmits(config, scope.options.agentId, targetId)) {
      return failure(
        'forbidden',
        `A fork copies your history into the sub-agent, and agent "${targetId}" is another agent: that needs tools.agentToAgent.enabled and both "${scope.options.agentId}" and "${targetId}" in tools.agentToAgent.allow. Spawn with context "isolated" and put what the sub-agent needs in the task instead.`,
      );
    }
    try {
      const { messages } = await gateway.call('chat.history', { key: requesterKey, limit: 100 });
      inherited = forkHistory(messages, configuredSecrets(config));
    } catch (error) {
      const f = gatewayFailure(error, 'Your history could not be read for the fork.');
      return failure(f.status, f.error);
    }
  }

  // --- spawn ---
  const runTimeoutSeconds = clampInt(
    a.runTimeoutSeconds,
    target.subagents.runTimeoutSeconds,
    0,
    SESSIONS_SPAWN_MAX_TIMEOUT_SECONDS,
  );
  const childKey = subagentSessionKey(targetId);
  const childDepth = depth + 1;
  const meta: SubagentMeta = {
    mode,
    cleanup,
    task: a.task.slice(0, 200),
    requesterKey,
    spawnedAt: scope.now(),
    systemPrompt: subagentSystemPrompt({
      depth: childDepth,
      maxDepth: target.subagents.maxSpawnDepth,
      requesterDisplayKey: displayKey(scope, requesterKey),
      mode,
      ...(a.label ? { label: a.label.trim() } : {}),
    }),
  };
  const init: AgentSessionInit = {
    model,
    sandboxed: target.sandboxed,
    spawnDepth: childDepth,
    meta: { [SUBAGENT_META_KEY]: meta },
    ...(a.label ? { label: a.label.trim() } : {}),
    ...(a.thinking ? { thinkingLevel: a.thinking } : {}),
    ...(thread ? { thread: true } : {}),
    ...(a.attachments && a.attachments.length > 0 ? { attachments: a.attachments } : {}),
    ...(a.attachAs?.mountPath ? { attachAs: { mountPath: a.attachAs.mountPath } } : {}),
    ...(inherited && inherited.messages.length > 0 ? { inheritedHistory: inherited.messages } : {}),
  };
  const params: AgentRunParams = {
    sessionKey: childKey,
    message: a.task,
    lane: 'subagent',
    deliver: false,
    spawnedBy: requesterKey,
    provenance: { kind: 'inter_session', sourceSessionKey: requesterKey, sourceTool: 'sessions_spawn' },
    session: init,
    ...(runTimeoutSeconds > 0 ? { timeoutSeconds: runTimeoutSeconds } : {}),
  };
  try {
    const started = await gateway.call('agent', params);
    return toolResult({
      status: 'accepted',
      runId: started.runId,
      childSessionKey: displayKey(scope, started.sessionKey),
      model,
      mode,
      cleanup,
      ...(a.label ? { label: a.label.trim() } : {}),
      ...(started.thread ? { threadId: started.thread.threadId } : {}),
      ...(started.attachments ? { attachments: started.attachments } : {}),
      ...(inherited
        ? {
            inherited: {
              messages: inherited.messages.length,
              redacted: inherited.redacted,
              dropped: inherited.dropped,
            },
          }
        : {}),
    });
  } catch (error) {
    const f = gatewayFailure(error, 'The sub-agent could not be started.');
    return failure(f.status, f.error);
  }
}
