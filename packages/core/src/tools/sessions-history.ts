import { Type } from '@sinclair/typebox';
import { type SanitizedMessage, sanitizeHistory } from '../history/index.js';
import { type AgentTool, toolResult } from '../interfaces/tool.js';
import { clampInt, dropNonFinite } from './sessions-list.js';
import {
  configuredSecrets,
  displayKey,
  failure,
  findAllowedTarget,
  gatewayFailure,
  type ToolScope,
} from './tool-context.js';
import { validateToolArgs } from './validate-args.js';

/** Messages sessions_history returns when `limit` is not given. */
export const SESSIONS_HISTORY_DEFAULT_LIMIT = 50;
/** The most messages sessions_history returns. */
export const SESSIONS_HISTORY_MAX_LIMIT = 500;

export const SessionsHistoryParams = Type.Object(
  {
    sessionKey: Type.String({
      minLength: 1,
      maxLength: 512,
      description: 'A session key or sessionId from sessions_list.',
    }),
    limit: Type.Optional(
      Type.Number({
        minimum: 1,
        description: `Most messages (default ${SESSIONS_HISTORY_DEFAULT_LIMIT}, at most ${SESSIONS_HISTORY_MAX_LIMIT}).`,
      }),
    ),
    includeTools: Type.Optional(Type.Boolean({ description: 'Include tool results (default false).' })),
  },
  { additionalProperties: false },
);

/** The result of sessions_history. */
export interface SessionsHistoryResult {
  sessionKey: string;
  messages: SanitizedMessage[];
  truncated: boolean;
  redacted: boolean;
  hardCapped: boolean;
  totalBytes: number;
}

/** Creates the `sessions_history` tool for one requester. */
export function createSessionsHistoryTool(scope: ToolScope): AgentTool<typeof SessionsHistoryParams> {
  return {
    name: 'sessions_history',
    description:
      'Read the recent transcript of a session you can see (by key or sessionId). Secrets are redacted, long ' +
      'texts cut, images omitted; tool results only with includeTools.',
    parameters: SessionsHistoryParams,
    async execute(_toolCallId, rawArgs) {
      const args = validateToolArgs(
        'sessions_history',
        SessionsHistoryParams,
        dropNonFinite(rawArgs, ['limit']),
      );
      if (!args.ok) return failure('error', args.error);
      const target = await findAllowedTarget(scope, args.value.sessionKey, 'history');
      if (!target.ok) return failure(target.failure.status, target.failure.error);
      const limit = clampInt(args.value.limit, SESSIONS_HISTORY_DEFAULT_LIMIT, 1, SESSIONS_HISTORY_MAX_LIMIT);
      try {
        const { messages } = await scope.options.gateway.call('chat.history', {
          key: target.session.key,
          limit,
        });
        const sanitized = sanitizeHistory(messages, {
          includeTools: args.value.includeTools ?? false,
          secrets: configuredSecrets(scope.options.config),
        });
        const result: SessionsHistoryResult = {
          sessionKey: displayKey(scope, target.session.key),
          ...sanitized,
        };
        return toolResult(result);
      } catch (error) {
        const f = gatewayFailure(error, 'Reading the history failed.');
        return failure(f.status, f.error);
      }
    },
  };
}
