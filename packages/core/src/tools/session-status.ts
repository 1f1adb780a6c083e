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
  sessionKey: string;
  sessionId: string;
  agentId: string;
  model: string;
  thinking: string;
  usage: { inputTokens: number; outputTokens: number; totalTokens: number; contextTokens: number };
  estimatedCostUsd?: number;
  time: string;
  updatedAt: number;
  status: SessionStatus;
  /** Grows by one on every change of the session (message, run start or end, settings patch). */
  stateVersion: number;
  /** With `changesSince`: the changes after it, kinds and counts only. */
  changes?: SessionChanges;
  queueDepth: number;
  channel: string;
  deliveryContext?: DeliveryContext;
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
