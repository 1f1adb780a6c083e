import { Type } from '@sinclair/typebox';
import { type AgentTool, type ToolResult, toolResult } from '../interfaces/tool.js';
import { evaluateSendPolicy } from '../policy/index.js';
import { agentToAgentContext, runAgentToAgentFlow } from './agent-to-agent.js';
import { clampInt, dropNonFinite } from './sessions-list.js';
import {
  displayKey,
  failure,
  findAllowedTarget,
  findAllowedTargetByLabel,
  gatewayFailure,
  type ToolScope,
} from './tool-context.js';
import { validateToolArgs } from './validate-args.js';

/** Seconds sessions_send waits for the reply when `timeoutSeconds` is not given. */
export const SESSIONS_SEND_DEFAULT_TIMEOUT_SECONDS = 30;
/** The longest wait sessions_send accepts. */
export const SESSIONS_SEND_MAX_TIMEOUT_SECONDS = 3_600;
/** The longest message sessions_send accepts. */
export const SESSIONS_SEND_MAX_MESSAGE_CHARS = 32_000;

export const SessionsSendParams = Type.Object(
  {
    sessionKey: Type.Optional(
      Type.String({ minLength: 1, maxLength: 512, description: 'Target session key or sessionId.' }),
    ),
    label: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description: 'Target session label (instead of sessionKey).',
      }),
    ),
    agentId: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'The agent that owns the labelled session.' }),
    ),
    message: Type.String({
      minLength: 1,
      maxLength: SESSIONS_SEND_MAX_MESSAGE_CHARS,
      description: 'The message to send.',
    }),
    timeoutSeconds: Type.Optional(
      Type.Number({
        minimum: 0,
        description: `Seconds to wait for the reply (default ${SESSIONS_SEND_DEFAULT_TIMEOUT_SECONDS}; 0 = do not wait).`,
      }),
    ),
    watch: Type.Optional(
      Type.Boolean({
        description:
          'Watch the target: when it has changed after this send and is idle again, you get ONE notice ' +
          '(which session, kinds and counts of the changes) that wakes you. Best with timeoutSeconds: 0 ' +
          'and sessions_yield. Default false.',
      }),
    ),
  },
  { additionalProperties: false },
);

/** With `watch: true`: the watch counts the target's changes after this `stateVersion`. */
export interface SessionsSendWatching {
  /** With `watch: true`: the watch counts the target's changes after this `stateVersion`. */
  watching?: { sinceVersion: number };
}

/** The results of sessions_send. */
export type SessionsSendResult =
  | ({ runId: string; status: 'accepted'; sessionKey: string } & SessionsSendWatching)
  | ({ runId: string; status: 'ok'; reply: string; sessionKey: string } & SessionsSendWatching)
  | ({ runId: string; status: 'timeout' | 'error'; error: string } & SessionsSendWatching)
  | { status: 'error' | 'forbidden'; error: string };

/** Creates the `sessions_send` tool for one requester. */
export function createSessionsSendTool(
  scope: ToolScope,
): AgentTool<typeof SessionsSendParams, SessionsSendResult> {
  return {
    name: 'sessions_send',
    description:
      'Send a message to another session (by sessionKey, or by label with an optional agentId) and wait up to ' +
      'timeoutSeconds for its reply. The other agent knows the message comes from you, not from its human. ' +
      'With watch: true you also get one notice when that session has changed and is idle again.',
    parameters: SessionsSendParams,
    execute: (_toolCallId, rawArgs) => send(scope, rawArgs),
  };
}

async function send(scope: ToolScope, rawArgs: unknown): Promise<ToolResult<SessionsSendResult>> {
  const args = validateToolArgs(
    'sessions_send',
    SessionsSendParams,
    dropNonFinite(rawArgs, ['timeoutSeconds']),
  );
  if (!args.ok) return failure('error', args.error);
  const { sessionKey, label, agentId, message } = args.value;
  if (message.trim() === '')
    return failure('error', 'The message is empty; write what the other session should read.');
  if (sessionKey !== undefined && label !== undefined) {
    return failure('error', 'Pass either sessionKey or label, not both.');
  }
  if (sessionKey === undefined && label === undefined) {
    return failure('error', 'Pass sessionKey (a key or sessionId from sessions_list) or label.');
  }
  if (sessionKey !== undefined && agentId !== undefined) {
    return failure('error', 'Pass agentId only with label; a sessionKey already names its agent.');
  }
  const target =
    sessionKey !== undefined
      ? await findAllowedTarget(scope, sessionKey, 'send')
      : await findAllowedTargetByLabel(scope, label!, agentId, 'send');
  if (!target.ok) return failure(target.failure.status, target.failure.error);
  const session = target.session;
  const { config, gateway, requesterKey } = scope.options;

  const policy = evaluateSendPolicy(session, config.session.sendPolicy);
  if (!policy.allowed) {
    return failure(
      'forbidden',
      `Sending to ${displayKey(scope, session.key)} is denied by its send policy: ${policy.reason}`,
    );
  }
  const hop = (scope.options.hop ?? 0) + 1;
  const maxHops = config.session.agentToAgent.maxHops;
  if (hop > maxHops) {
    return failure(
      'forbidden',
      `This message would be hop ${hop} of an agent-to-agent chain, over session.agentToAgent.maxHops (${maxHops}); ` +
        'answer your own chat instead of forwarding again.',
    );
  }

  const timeoutSeconds = clampInt(
    args.value.timeoutSeconds,
    SESSIONS_SEND_DEFAULT_TIMEOUT_SECONDS,
    0,
    SESSIONS_SEND_MAX_TIMEOUT_SECONDS,
  );
  const requesterDisplay = displayKey(scope, requesterKey);
  const targetDisplay = displayKey(scope, session.key);
  let runId: string;
  let watching: SessionsSendWatching = {};
  try {
    const queued = await gateway.call('agent', {
      sessionKey: session.key,
      message,
      deliver: false,
      extraSystemPrompt: agentToAgentContext(requesterDisplay, 'request'),
      provenance: { kind: 'inter_session', sourceSessionKey: requesterKey, sourceTool: 'sessions_send', hop },
      ...(args.value.watch ? { watchBy: requesterKey } : {}),
    });
    runId = queued.runId;
    if (queued.watching) watching = { watching: queued.watching };
  } catch (error) {
    const f = gatewayFailure(error, 'The message could not be queued.');
    return failure(f.status, f.error);
  }

  const flow = runAgentToAgentFlow(scope, {
    primaryRunId: runId,
    requesterKey,
    requesterDisplayKey: requesterDisplay,
    targetKey: session.key,
    targetDisplayKey: targetDisplay,
    request: message,
    hop,
  }).then(() => undefined);
  if (scope.options.track) scope.options.track(flow);
  else flow.catch(() => undefined);

  if (timeoutSeconds === 0) {
    return toolResult({ runId, status: 'accepted', sessionKey: targetDisplay, ...watching });
  }
  try {
    const waited = await gateway.call('agent.wait', { runId, timeoutMs: timeoutSeconds * 1000 });
    if (waited.waitTimedOut) {
      return toolResult(
        {
          runId,
          status: 'timeout',
          error: `No reply within ${timeoutSeconds}s. The run continues; read its reply later with sessions_history on ${targetDisplay}.`,
          ...watching,
        },
        true,
      );
    }
    if (waited.status === 'done') {
      return toolResult({
        runId,
        status: 'ok',
        reply: waited.reply ?? '',
        sessionKey: targetDisplay,
        ...watching,
      });
    }
    return toolResult(
      {
        runId,
        status: 'error',
        error: waited.error ?? `The run ended with status "${waited.status}".`,
        ...watching,
      },
      true,
    );
  } catch (error) {
    return toolResult(
      {
        runId,
        status: 'error',
        error: gatewayFailure(error, 'Waiting for the reply failed.').error,
        ...watching,
      },
      true,
    );
  }
}
