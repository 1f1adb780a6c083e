import { Type } from '@sinclair/typebox';
import type { SessionYieldState } from '../interfaces/gateway.js';
import { type AgentTool, type ToolResult, toolResult } from '../interfaces/tool.js';
import { displayKey, failure, gatewayFailure, type ToolScope } from './tool-context.js';
import { validateToolArgs } from './validate-args.js';

/** The longest timeout sessions_yield accepts (one day). */
export const SESSIONS_YIELD_MAX_TIMEOUT_SECONDS = 86_400;
/** The longest reason sessions_yield accepts. */
export const SESSIONS_YIELD_MAX_REASON_CHARS = 500;

/** The parameters of `sessions_yield`. */
export const SessionsYieldParams = Type.Object(
  {
    reason: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: SESSIONS_YIELD_MAX_REASON_CHARS,
        description: 'What you are waiting for; you are reminded of it when you wake.',
      }),
    ),
    timeoutSeconds: Type.Optional(
      Type.Number({
        minimum: 1,
        maximum: SESSIONS_YIELD_MAX_TIMEOUT_SECONDS,
        description: 'Wake after this many seconds even if nothing arrived (default: no timeout).',
      }),
    ),
  },
  { additionalProperties: false },
);

/** The results of sessions_yield. */
export type SessionsYieldResult =
  | {
      status: 'yielded';
      sessionKey: string;
      reason?: string;
      timeoutSeconds?: number;
      pending: { children: number; results: number; inbox: number; watches?: number };
      note: string;
    }
  | { status: 'error' | 'forbidden'; error: string };

/** Creates the `sessions_yield` tool for one requester. */
export function createSessionsYieldTool(
  scope: ToolScope,
): AgentTool<typeof SessionsYieldParams, SessionsYieldResult> {
  return {
    name: 'sessions_yield',
    description:
      'End your turn now and sleep until a sub-agent result or a message arrives (or timeoutSeconds pass); ' +
      'you are told why you woke. Use it instead of polling while sub-agents work. Refused when nothing is pending.',
    parameters: SessionsYieldParams,
    execute: (_toolCallId, rawArgs) => yieldTurn(scope, rawArgs),
  };
}

async function yieldTurn(scope: ToolScope, rawArgs: unknown): Promise<ToolResult<SessionsYieldResult>> {
  const args = validateToolArgs('sessions_yield', SessionsYieldParams, rawArgs);
  if (!args.ok) return failure('error', args.error);
  const reason = args.value.reason?.trim();
  if (args.value.reason !== undefined && !reason) {
    return failure('error', 'reason is blank; say what you wait for, or leave reason out.');
  }
  const timeoutSeconds =
    args.value.timeoutSeconds === undefined ? undefined : Math.floor(args.value.timeoutSeconds);
  try {
    const result = await scope.options.gateway.call('session.yield', {
      key: scope.options.requesterKey,
      ...(reason ? { reason } : {}),
      ...(timeoutSeconds !== undefined ? { timeoutSeconds } : {}),
    });
    const details: SessionsYieldResult = {
      status: 'yielded',
      sessionKey: displayKey(scope, result.sessionKey),
      ...(reason ? { reason } : {}),
      ...(timeoutSeconds !== undefined ? { timeoutSeconds } : {}),
      pending: result.pending,
      note: wakeNote(result.yielded),
    };
    return { ...toolResult(details), endTurn: true };
  } catch (error) {
    const f = gatewayFailure(error, 'The session could not yield.');
    return failure(f.status, f.error);
  }
}

function wakeNote(state: SessionYieldState): string {
  const timeout = state.timeoutSeconds === undefined ? '' : `, or after ${state.timeoutSeconds} s`;
  return `Your turn ends now. You wake when a result or a message arrives${timeout}.`;
}
