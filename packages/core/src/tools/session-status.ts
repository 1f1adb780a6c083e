import { Type } from '@sinclair/typebox';
import { agentConfigFor } from '../config/index.js';
import type { DeliveryContext, SessionStatus } from '../interfaces/records.js';
import type { SessionChanges } from '../interfaces/store.js';
import { type AgentTool, toolResult } from '../interfaces/tool.js';
import { deriveChannelField } from '../keys/index.js';
import { evaluateSendPolicy } from '../policy/index.js';
import { isoWithOffset } from './iso-time.js';
import { displayKey, failure, findAllowedTarget, gatewayFailure, type ToolScope } from './tool-context.js';
import { validateToolArgs } from './validate-args.js';

export const SessionStatusParams = Type.Object(
  {
    sessionKey: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 512,
        description: 'A session key or sessionId (default: your own session).',
      }),
    ),
    changesSince: Type.Optional(
      Type.Integer({
        minimum: 0,
        description:
          'A stateVersion you read earlier: also count the changes after it (kinds and counts: messages, ' +
          'run status changes, settings changes; never their content).',
      }),
    ),
  },
  { additionalProperties: false },
);

/** The result of session_status. */
export interface SessionStatusToolResult {
  /** The session key in display form. */
  sessionKey: string;
  /** The session's stable opaque id. */
  sessionId: string;
  /** The id of the agent that owns the session. */
  agentId: string;
  /** The model in use (`provider/model`), or `none configured`. */
  model: string;
  /** The session's thinking level, or `default`. */
  thinking: string;
  /** Token counters of the session (0 when unknown). */
  usage: { inputTokens: number; outputTokens: number; totalTokens: number; contextTokens: number };
  /** Accumulated model cost in US dollars, when priced. */
  estimatedCostUsd?: number;
  /** The current local time, ISO 8601 with its UTC offset. */
  time: string;
  /** Epoch milliseconds of the session's last activity. */
  updatedAt: number;
  /** The session's run state. */
  status: SessionStatus;
  /** Grows by one on every change of the session (message, run start or end, settings patch). */
  stateVersion: number;
  /** With `changesSince`: the changes after it, kinds and counts only. */
  changes?: SessionChanges;
  /** How many runs of the session are queued. */
  queueDepth: number;
  /** A channel id, `internal` (cron, hook, node sessions) or `unknown`. */
  channel: string;
  /** Where the session's replies go. */
  deliveryContext?: DeliveryContext;
  /** Whether the send policy lets the session send to its chat now. */
  sendPolicy: 'allow' | 'deny';
}

/** Creates the `session_status` tool for one requester. */
export function createSessionStatusTool(scope: ToolScope): AgentTool<typeof SessionStatusParams> {
  return {
    name: 'session_status',
    description:
      'Show the status of a session (default: yours): model, token usage, cost, run status, queue depth, ' +
      'channel, send policy, the current local time, and its stateVersion. Pass changesSince (a stateVersion ' +
      'read earlier) to learn what changed since then, as kinds and counts.',
    parameters: SessionStatusParams,
    async execute(_toolCallId, rawArgs) {
      const args = validateToolArgs('session_status', SessionStatusParams, rawArgs);
      if (!args.ok) return failure('error', args.error);
      const target = await findAllowedTarget(
        scope,
        args.value.sessionKey ?? scope.options.requesterKey,
        'status',
      );
      if (!target.ok) return failure(target.failure.status, target.failure.error);
      const { changesSince } = args.value;
      const known = target.session.stateVersion ?? 0;
      if (changesSince !== undefined && changesSince > known) {
        return failure(
          'error',
          `changesSince ${changesSince} is ahead of this session's stateVersion ${known}; pass a stateVersion you read earlier from session_status.`,
        );
      }
      try {
        const status = await scope.options.gateway.call('session.status', {
          key: target.session.key,
          ...(changesSince !== undefined ? { changesSince } : {}),
        });
        const session = status.session;
        const config = scope.options.config;
        const agent = agentConfigFor(config, session.agentId);
        const policy = evaluateSendPolicy(session, config.session.sendPolicy);
        const result: SessionStatusToolResult = {
          sessionKey: displayKey(scope, session.key),
          sessionId: session.sessionId,
          agentId: session.agentId,
          model: session.model ?? agent.model ?? 'none configured',
          thinking: session.thinkingLevel ?? 'default',
          usage: {
            inputTokens: session.usage?.inputTokens ?? 0,
            outputTokens: session.usage?.outputTokens ?? 0,
            totalTokens: session.usage?.totalTokens ?? 0,
            contextTokens: session.usage?.contextTokens ?? 0,
          },
          ...(session.estimatedCostUsd !== undefined ? { estimatedCostUsd: session.estimatedCostUsd } : {}),
          time: isoWithOffset(new Date(scope.now())),
          updatedAt: session.updatedAt,
          status: status.status,
          stateVersion: status.stateVersion,
          ...(status.changes ? { changes: status.changes } : {}),
          queueDepth: status.queueDepth,
          channel: deriveChannelField(session),
          ...(session.deliveryContext ? { deliveryContext: session.deliveryContext } : {}),
          sendPolicy: policy.allowed ? 'allow' : 'deny',
        };
        return toolResult(result);
      } catch (error) {
        const f = gatewayFailure(error, 'Reading the session status failed.');
        return failure(f.status, f.error);
      }
    },
  };
}
