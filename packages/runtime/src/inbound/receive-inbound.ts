import { type InboundMessage, parseSendCommand, type SessionRecord } from '@colloquy/core';
import { defaultLaneFor, enqueueRun } from '../agent/enqueue-run.js';
import type { RuntimeContext } from '../runtime/runtime-context.js';
import type { CommandsHook } from '../runtime/runtime-options.js';
import { sessionAfterInbound, sessionKeyForInbound } from './session-for-inbound.js';

/** The inbound options of the runtime. */
export interface InboundHooks {
  commands?: CommandsHook;
  isOwner?: (inbound: InboundMessage) => boolean;
}

/** What happened to an inbound message (for tests and logs). */
export type InboundOutcome =
  | { action: 'ignored'; reason: string }
  | { action: 'send-policy'; sessionKey: string; sendPolicy: 'allow' | 'deny' | 'inherit' }
  | { action: 'command'; sessionKey: string }
  | { action: 'queued'; sessionKey: string; runId: string };

/**
 * Handles one inbound message (what `ChannelContext.receive` calls):
 * 1. group and channel messages that do not address the bot are ignored (nothing is recorded);
 * 2. the session is found (thread binding first, else derived from the chat) and created or updated
 *    with the chat as its delivery context;
 * 3. `/send on|off|inherit` alone, from the owner, sets the session's send-policy override;
 * 4. the `commands` hook may answer (the model is not run);
 * 5. otherwise a run is queued with `deliver: true`, in the same transaction as the session write.
 *
 * @param ctx - the runtime internals
 * @param hooks - `commands` and `isOwner`
 * @param inbound - the normalised message
 * @returns what was done
 */
export async function receiveInbound(
  ctx: RuntimeContext,
  hooks: InboundHooks,
  inbound: InboundMessage,
): Promise<InboundOutcome> {
  if (!ctx.accepting) return { action: 'ignored', reason: 'the runtime is shutting down' };
  if (inbound.chat.type !== 'direct' && !inbound.mentionsBot) {
    return { action: 'ignored', reason: 'a group message that does not address the bot' };
  }
  const { store, config } = ctx;
  const now = ctx.clock.now();
  const plugin = ctx.plugins.get(inbound.channel);
  const { key, bound } = sessionKeyForInbound(store, config, plugin, inbound, now);
  if (bound && inbound.threadId) {
    store.putThreadBinding({
      ...store.getThreadBinding(inbound.channel, inbound.accountId, inbound.threadId)!,
      lastActiveAt: now,
    });
  }
  const session = sessionAfterInbound(config, store.getSession(key), key, inbound, now);

  const sendCommand = parseSendCommand(inbound.text);
  if (sendCommand && hooks.isOwner?.(inbound)) {
    const updated = { ...session, ...(sendCommand === 'inherit' ? {} : { sendPolicy: sendCommand }) };
    if (sendCommand === 'inherit') delete updated.sendPolicy;
    store.putSession(updated);
    ctx.events.emit({ type: 'session.updated', sessionKey: key });
    // The confirmation goes through the pipeline like any reply: after `/send off` it is denied.
    const confirmation =
      sendCommand === 'inherit'
        ? 'This session follows the configured send policy again.'
        : `Sending is ${sendCommand === 'allow' ? 'on' : 'off'} for this session.`;
    await reply(ctx, updated, confirmation, inbound.messageId);
    return { action: 'send-policy', sessionKey: key, sendPolicy: sendCommand };
  }

  if (hooks.commands) {
    store.putSession(session);
    const answer = await hooks.commands(inbound, session);
    if (answer !== undefined) {
      await reply(ctx, store.getSession(key) ?? session, answer, inbound.messageId);
      return { action: 'command', sessionKey: key };
    }
  }

  const run = enqueueRun(
    ctx,
    {
      sessionKey: key,
      message: inbound.text,
      lane: defaultLaneFor(session),
      deliver: true,
      meta: {
        input: {
          sender: { id: inbound.sender.id, ...(inbound.sender.name ? { name: inbound.sender.name } : {}) },
          ...(inbound.media?.length ? { media: inbound.media } : {}),
          platformMessageId: inbound.messageId,
        },
      },
    },
    session,
  );
  return { action: 'queued', sessionKey: key, runId: run.runId };
}

async function reply(
  ctx: RuntimeContext,
  session: SessionRecord,
  text: string,
  replyTo: string,
): Promise<void> {
  await ctx.deliver({
    session,
    kind: 'command',
    message: { text, format: 'plain', replyToMessageId: replyTo },
  });
}
