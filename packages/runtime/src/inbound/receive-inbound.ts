import {
  ColloquyError,
  evaluateSendPolicy,
  type InboundMessage,
  isColloquyError,
  type SessionRecord,
} from '@colloquy/core';
import { classifySessionKey, parseSendCommand } from '@colloquy/core/internal';
import { defaultLaneFor } from '../agent/enqueue-run.js';
import type { RuntimeContext } from '../runtime/runtime-context.js';
import type { CommandsHook } from '../runtime/runtime-options.js';
import { admitInbound, BUSY_NOTICE, storeRefusedInbound } from './admit-inbound.js';
import { inboundRunId } from './inbound-run-id.js';
import { type InboundRun, queueInboundRun } from './queue-inbound-run.js';
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
  | { action: 'queued'; sessionKey: string; runId: string }
  | { action: 'busy'; sessionKey: string; runId: string };

/**
 * Handles one inbound message (what `ChannelContext.receive` calls):
 * 1. group and channel messages that do not address the bot start no run and write nothing to the
 *    store; they are kept in memory in the group's context window (`session.groupContext`);
 * 2. the session key is found (thread binding first, else derived from the chat);
 * 3. `/send on|off|inherit` alone, from the owner, sets the session's send-policy override;
 * 4. the `commands` hook may answer (the model is not run);
 * 5. otherwise ONE store operation (`commitInbound`, see `queueInboundRun`) creates or updates the
 *    session with the chat as its delivery context and stores a run with `deliver: true`, begun at
 *    once when the session is idle and a lane is free; the run goes to the queue, and is made
 *    durable (`store.flush`) before this resolves, since resolving acknowledges the message;
 *    in a group, the window of recent un-addressed messages goes with it (`meta.input.groupContext`)
 *    and the model reads it, marked as not addressed to it, before the message;
 * 6. but a session with `runtime.maxQueuedPerSession` runs waiting takes no more (`admitInbound`):
 *    the message is stored as a run that ended at once, and the chat is told once that the bot is busy.
 *
 * @param ctx - the runtime internals
 * @param hooks - `commands` and `isOwner`
 * @param inbound - the normalised message
 * @returns what was done
 * @throws `ABORTED` once the runtime is shutting down: the message was not taken (tell the sender)
 */
export async function receiveInbound(
  ctx: RuntimeContext,
  hooks: InboundHooks,
  inbound: InboundMessage,
): Promise<InboundOutcome> {
  if (!ctx.accepting) {
    throw new ColloquyError(
      'ABORTED',
      'The runtime is shutting down and did not take this message; send it again once it has restarted.',
    );
  }
  const { store, config } = ctx;
  const now = ctx.clock.now();
  const plugin = ctx.plugins.get(inbound.channel);
  if (inbound.chat.type !== 'direct' && !inbound.mentionsBot) {
    return keepAsGroupContext(ctx, inbound, now);
  }
  const { key, binding } = await sessionKeyForInbound(store, config, plugin, inbound, now);
  if (binding) await store.putThreadBinding({ ...binding, lastActiveAt: now });

  // Commands see the session as this message leaves it; a plain message never reads it.
  if (mayBeCommand(hooks, inbound)) {
    const session = sessionAfterInbound(config, await store.getSession(key), key, inbound, now);
    const answer = await answerCommand(ctx, hooks, inbound, session);
    if (answer?.repeated) return { action: 'ignored', reason: 'a command answered before' };
    if (answer) {
      // A store with group commit acknowledges writes early: what the command wrote is made durable
      // before its answer is sent.
      await ctx.store.flush?.();
      // The answer goes through the pipeline like any reply: after `/send off` it is denied.
      await reply(ctx, answer.session, answer.text, inbound.messageId);
      return answer.sendPolicy
        ? { action: 'send-policy', sessionKey: key, sendPolicy: answer.sendPolicy }
        : { action: 'command', sessionKey: key };
    }
  }

  const groupContext = inbound.chat.type === 'direct' ? [] : ctx.groupContext.take(key, now);
  const run: InboundRun = {
    runId: inboundRunId(inbound),
    sessionKey: key,
    lane: defaultLaneFor({ kind: classifySessionKey(key, { mainKey: config.session.mainKey }) }),
    meta: {
      input: {
        sender: { id: inbound.sender.id, ...(inbound.sender.name ? { name: inbound.sender.name } : {}) },
        ...(inbound.media?.length ? { media: inbound.media } : {}),
        ...(groupContext.length > 0 ? { groupContext } : {}),
        platformMessageId: inbound.messageId,
        // Error notices show their details to the owner only (see errorNoticeFor).
        ...(hooks.isOwner?.(inbound) ? { owner: true } : {}),
      },
    },
  };
  const admission = await admitInbound(ctx, key);
  if (!admission.admitted) return refuseBusy(ctx, inbound, run, admission.tell, now);
  const stored = await queueInboundRun(ctx, inbound, run, now).catch((error: unknown) => {
    if (isColloquyError(error) && error.code === 'CONFLICT') return undefined;
    throw error;
  });
  // Returning acknowledges the message to the channel (the Telegram offset, the web chat's echo): with
  // group commit, its run must be durable first. Concurrent messages share one commit.
  await ctx.store.flush?.();
  if (!stored) return { action: 'ignored', reason: 'a message received before (its run is stored)' };
  return { action: 'queued', sessionKey: key, runId: stored.runId };
}

/**
 * Stores a message the session's admission limit refused (see `storeRefusedInbound`), durably
 * before the message is acknowledged, and tells the chat it is busy when `tell`.
 */
async function refuseBusy(
  ctx: RuntimeContext,
  inbound: InboundMessage,
  run: InboundRun,
  tell: boolean,
  now: number,
): Promise<InboundOutcome> {
  const session = await storeRefusedInbound(ctx, inbound, run, now).catch((error: unknown) => {
    if (isColloquyError(error) && error.code === 'CONFLICT') return undefined;
    throw error;
  });
  await ctx.store.flush?.();
  if (!session) return { action: 'ignored', reason: 'a message received before (its run is stored)' };
  if (tell) await reply(ctx, session, BUSY_NOTICE, inbound.messageId);
  return { action: 'busy', sessionKey: run.sessionKey, runId: run.runId };
}

/** True when a message may be a command: the owner's `/send`, or anything when a `commands` hook is set. */
function mayBeCommand(hooks: InboundHooks, inbound: InboundMessage): boolean {
  if (hooks.commands) return true;
  return parseSendCommand(inbound.text) !== undefined && hooks.isOwner?.(inbound) === true;
}

/**
 * A group message that does not address the bot starts no run and writes nothing to the store; it
 * is kept in the session's group context window (memory, bounded) unless `session.groupContext` is
 * off or excludes the group.
 */
async function keepAsGroupContext(
  ctx: RuntimeContext,
  inbound: InboundMessage,
  now: number,
): Promise<InboundOutcome> {
  const ignored = { action: 'ignored', reason: 'a group message that does not address the bot' } as const;
  if (!ctx.config.session.groupContext.enabled) return ignored;
  const plugin = ctx.plugins.get(inbound.channel);
  const { key } = await sessionKeyForInbound(ctx.store, ctx.config, plugin, inbound, now);
  if (!ctx.groupContext.accepts(inbound, key)) return ignored;
  ctx.groupContext.record(key, inbound, now);
  return {
    action: 'ignored',
    reason: 'a group message that does not address the bot (kept as group context)',
  };
}

/** A command's answer: its text, and the session as the command left it. */
interface CommandAnswer {
  text: string;
  session: SessionRecord;
  sendPolicy?: 'allow' | 'deny' | 'inherit';
  /** The platform delivered an answered command again: nothing is run or sent. */
  repeated?: true;
}

/**
 * Answers `/send on|off|inherit` (from the owner: sets the override and stores the session) and the
 * messages the `commands` hook matches (the session is stored first, so its answer sees it).
 *
 * @returns the answer, or `undefined` when the message is not a command
 */
async function answerCommand(
  ctx: RuntimeContext,
  hooks: InboundHooks,
  inbound: InboundMessage,
  session: SessionRecord,
): Promise<CommandAnswer | undefined> {
  const sendCommand = parseSendCommand(inbound.text);
  if (sendCommand && hooks.isOwner?.(inbound)) {
    const updated: SessionRecord = { ...session };
    if (sendCommand === 'inherit') delete updated.sendPolicy;
    else updated.sendPolicy = sendCommand;
    await ctx.store.putSession(updated);
    ctx.events.emit({ type: 'session.updated', sessionKey: session.key });
    const text =
      sendCommand === 'inherit'
        ? 'This session follows the configured send policy again.'
        : `Sending is ${sendCommand === 'allow' ? 'on' : 'off'} for this session.`;
    return { text, session: updated, sendPolicy: sendCommand };
  }
  // A message that is no command writes nothing here: its session is stored with its run.
  if (!hooks.commands?.matches(inbound, session)) return undefined;
  if (answeredCommandIds(session).includes(inbound.messageId)) return { text: '', session, repeated: true };
  await ctx.store.putSession(session);
  const text = await hooks.commands.answer(inbound, session);
  if (text === undefined) return undefined;
  const after = (await ctx.store.getSession(session.key)) ?? session;
  const answered = {
    ...after,
    meta: { ...after.meta, [ANSWERED_COMMANDS_META_KEY]: rememberAnswered(after, inbound) },
  };
  await ctx.store.putSession(answered);
  return { text, session: answered };
}

/**
 * Where a session keeps the platform message ids of the commands it answered last
 * (`session.meta.answeredCommands`, newest last, at most {@link ANSWERED_COMMANDS_KEPT}): a command the
 * platform delivers again (a poller that took over before the offset was confirmed, a webhook retry)
 * is not run twice. An ordinary message needs none of this: its run id is derived from the message.
 */
const ANSWERED_COMMANDS_META_KEY = 'answeredCommands';
const ANSWERED_COMMANDS_KEPT = 32;

function answeredCommandIds(session: SessionRecord): readonly string[] {
  const ids = session.meta?.[ANSWERED_COMMANDS_META_KEY];
  return Array.isArray(ids) ? ids.filter((id): id is string => typeof id === 'string') : [];
}

function rememberAnswered(session: SessionRecord, inbound: InboundMessage): string[] {
  return [...answeredCommandIds(session), inbound.messageId].slice(-ANSWERED_COMMANDS_KEPT);
}

/**
 * Runs a slash command for a plugin's native command UI (`ChannelContext.runCommand`): the session
 * is found and updated as for any inbound message (mention gating aside: a native command is always
 * addressed to the bot), then `/send` or the `commands` hook answers. The text is returned for the
 * plugin to show; it is empty when the session's send policy denies sending.
 *
 * @param ctx - the runtime internals
 * @param hooks - `commands` and `isOwner`
 * @param inbound - the command as a normalised message
 * @returns the reply text (`Unknown command ...` when nothing answers)
 */
export async function runInboundCommand(
  ctx: RuntimeContext,
  hooks: InboundHooks,
  inbound: InboundMessage,
): Promise<string> {
  const now = ctx.clock.now();
  const plugin = ctx.plugins.get(inbound.channel);
  const { key } = await sessionKeyForInbound(ctx.store, ctx.config, plugin, inbound, now);
  const session = sessionAfterInbound(ctx.config, await ctx.store.getSession(key), key, inbound, now);
  const answer = await answerCommand(ctx, hooks, inbound, session);
  const target = answer?.session ?? session;
  const allowed = evaluateSendPolicy(target, ctx.config.session.sendPolicy).allowed;
  if (!allowed) return '';
  if (answer) return answer.text;
  const name = inbound.text.trim().split(/\s+/)[0] ?? inbound.text;
  return `Unknown command ${name}. Send a message without a leading "/" to talk to the agent.`;
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
