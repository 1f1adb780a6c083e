import type { AnnounceOutcome, MessageProvenance } from '../interfaces/records.js';
import { isMcpClientSessionKey } from '../mcp/mcp-tokens.js';
import type { ToolScope } from './tool-context.js';

/** A reply of exactly this ends the reply-back loop. */
export const REPLY_SKIP = 'REPLY_SKIP';
/** A reply of exactly this keeps the announce step silent. */
export const ANNOUNCE_SKIP = 'ANNOUNCE_SKIP';

/** How long the background flow waits for any one agent-to-agent turn. */
const TURN_WAIT_MS = 10 * 60_000;

/** The system context injected into a run that answers another agent, so it never mistakes it for its human. */
export function agentToAgentContext(sourceDisplayKey: string, purpose: 'request' | 'reply-back'): string {
  const intro =
    `The next message comes from another agent session (${sourceDisplayKey}) through sessions_send, ` +
    'not from your human user. Answer that agent; your reply is returned to it.';
  return purpose === 'request'
    ? intro
    : `${intro} This is the reply-back exchange: continue only if it helps; reply exactly ${REPLY_SKIP} to end it.`;
}

/** The prompt of the announce step, run on the target only. */
export function announcePrompt(request: string, firstReply: string, latestReply: string): string {
  return [
    'Agent-to-agent exchange finished. Decide whether your own chat should hear about it.',
    `Original request:\n${request}`,
    `Your first reply:\n${firstReply}`,
    `Latest reply:\n${latestReply}`,
    `Write a short announcement for your chat, or reply exactly ${ANNOUNCE_SKIP} to stay silent.`,
  ].join('\n\n');
}

/** What the background flow needs to know about one sessions_send. */
export interface AgentToAgentExchange {
  primaryRunId: string;
  requesterKey: string;
  requesterDisplayKey: string;
  targetKey: string;
  targetDisplayKey: string;
  request: string;
  /** The hop of the primary message. */
  hop: number;
}

/**
 * After the primary run: the reply-back loop (requester and target alternate, at most
 * `session.agentToAgent.maxPingPongTurns` turns, `REPLY_SKIP` ends it), then the announce step on the
 * target, delivered through the gateway's delivery pipeline (send policy applies). The outcome is
 * recorded on the primary run, never dropped silently.
 */
export async function runAgentToAgentFlow(
  scope: ToolScope,
  exchange: AgentToAgentExchange,
): Promise<AnnounceOutcome> {
  const outcome = await exchangeAndAnnounce(scope, exchange).catch(
    (error: unknown): AnnounceOutcome => ({
      outcome: 'failed',
      reason: error instanceof Error ? error.message : String(error),
      at: scope.now(),
    }),
  );
  await scope.options.gateway
    .call('agent.recordAnnounce', { runId: exchange.primaryRunId, outcome })
    .catch(() => undefined);
  return outcome;
}

async function exchangeAndAnnounce(
  scope: ToolScope,
  exchange: AgentToAgentExchange,
): Promise<AnnounceOutcome> {
  const { gateway, config } = scope.options;
  const primary = await gateway.call('agent.wait', { runId: exchange.primaryRunId, timeoutMs: TURN_WAIT_MS });
  if (primary.waitTimedOut || primary.status !== 'done') {
    return {
      outcome: 'skipped',
      reason: `the primary run ended ${primary.waitTimedOut ? 'without finishing in time' : `with status ${primary.status}`}`,
      at: scope.now(),
    };
  }
  const firstReply = primary.reply ?? '';
  let latest = firstReply;
  const parties = [
    { key: exchange.requesterKey, display: exchange.requesterDisplayKey },
    { key: exchange.targetKey, display: exchange.targetDisplayKey },
  ] as const;
  // An MCP client is no model: it cannot take a reply-back turn, so the exchange goes straight to the announce.
  const turns = isMcpClientSessionKey(exchange.requesterKey)
    ? 0
    : config.session.agentToAgent.maxPingPongTurns;
  for (let turn = 0; turn < turns; turn++) {
    if (latest.trim() === REPLY_SKIP) break;
    const speaker = parties[turn % 2]!;
    const listener = parties[(turn + 1) % 2]!;
    const reply = await runTurn(
      scope,
      speaker.key,
      latest,
      agentToAgentContext(listener.display, 'reply-back'),
      {
        kind: 'inter_session',
        sourceSessionKey: listener.key,
        sourceTool: 'sessions_send',
        sourceRunId: exchange.primaryRunId,
        hop: exchange.hop + turn + 1,
      },
    );
    if (reply === undefined) break;
    latest = reply;
  }
  const latestForAnnounce = latest.trim() === REPLY_SKIP ? firstReply : latest;
  const announcement = await runTurn(
    scope,
    exchange.targetKey,
    announcePrompt(exchange.request, firstReply, latestForAnnounce),
    `Announce step of an agent-to-agent exchange with ${exchange.requesterDisplayKey}.`,
    {
      kind: 'system',
      sourceSessionKey: exchange.requesterKey,
      sourceTool: 'sessions_send',
      sourceRunId: exchange.primaryRunId,
    },
  );
  if (announcement === undefined)
    return { outcome: 'failed', reason: 'the announce run did not finish', at: scope.now() };
  if (announcement.trim() === ANNOUNCE_SKIP)
    return { outcome: 'skipped', reason: ANNOUNCE_SKIP, at: scope.now() };
  const delivery = await gateway.call('chat.send', { key: exchange.targetKey, text: announcement });
  switch (delivery.status) {
    case 'delivered':
      return { outcome: 'delivered', at: scope.now() };
    case 'denied':
      return { outcome: 'denied', reason: delivery.reason, at: scope.now() };
    case 'skipped':
      return { outcome: 'skipped', reason: delivery.reason, at: scope.now() };
    default:
      return { outcome: 'failed', reason: delivery.error, at: scope.now() };
  }
}

/** Runs one turn on `sessionKey` without delivering it; returns the reply, or undefined if it did not finish. */
async function runTurn(
  scope: ToolScope,
  sessionKey: string,
  message: string,
  extraSystemPrompt: string,
  provenance: MessageProvenance,
): Promise<string | undefined> {
  const { gateway } = scope.options;
  const { runId } = await gateway.call('agent', {
    sessionKey,
    message,
    deliver: false,
    extraSystemPrompt,
    provenance,
  });
  const result = await gateway.call('agent.wait', { runId, timeoutMs: TURN_WAIT_MS });
  return !result.waitTimedOut && result.status === 'done' ? (result.reply ?? '') : undefined;
}
