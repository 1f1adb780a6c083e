import type { InboundMessage, SessionRecord } from '@colloquy/core';
import type { RunRecord } from '@colloquy/core/gateway';
import type { RuntimeContext } from '../runtime/runtime-context.js';

/** The sender of a slash command that came through the gateway (the admin token's holder). */
const GATEWAY_SENDER = { id: 'gateway', name: 'Gateway', isOwner: true } as const;

/**
 * Answers a slash command sent through the gateway (`agent` with `provenance.kind: "system"`, as
 * `colloquy sessions send main "/help"` does) with the `commands` hook, as a chat message would be;
 * the model is not called, so commands work without one. Runs of other origins (chat messages,
 * which met the hook on arrival, agents' `sessions_send`) and folded batches are left alone.
 *
 * @param ctx - the runtime internals
 * @param session - the run's session
 * @param runs - the turn's runs, leader first
 * @returns the command's answer, or `undefined` when the model should run
 */
export async function answerGatewayCommand(
  ctx: RuntimeContext,
  session: SessionRecord,
  runs: readonly RunRecord[],
): Promise<string | undefined> {
  const [run] = runs;
  if (!ctx.commands || runs.length !== 1 || !run) return undefined;
  const text = run.message.trim();
  if (!text.startsWith('/') || run.provenance?.kind !== 'system' || run.meta?.input !== undefined) {
    return undefined;
  }
  const inbound: InboundMessage = {
    channel: 'gateway',
    accountId: 'default',
    chat: { type: 'direct', id: GATEWAY_SENDER.id },
    sender: { ...GATEWAY_SENDER },
    text,
    mentionsBot: true,
    messageId: run.runId,
    timestamp: ctx.clock.now(),
  };
  return ctx.commands.matches(inbound, session) ? ctx.commands.answer(inbound, session) : undefined;
}
