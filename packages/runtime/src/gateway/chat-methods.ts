import { ColloquyError } from '@colloquy/core';
import type { GatewayResult } from '@colloquy/core/gateway';
import type { RuntimeContext } from '../runtime/runtime-context.js';
import { fireDueWatchesLater } from '../runtime/watch-notices.js';
import { readParams } from './params.js';
import { requireSession } from './resolve-session.js';

/** Default and maximum `limit` of `chat.history`. */
export const HISTORY_DEFAULT_LIMIT = 50;
export const HISTORY_MAX_LIMIT = 500;

/**
 * `chat.history`: the last `limit` transcript messages (default 50, at most 500), oldest first,
 * optionally before a `seq` and skipping the newest `offset` of those, and the transcript's total
 * length. A page deep in a long transcript costs what the first page costs. Messages are returned as stored;
 * the session tools sanitise what they show the model.
 *
 * @throws `SESSION_NOT_FOUND`, `INVALID_ARGUMENT`
 */
export async function chatHistory(
  ctx: RuntimeContext,
  params: unknown,
): Promise<GatewayResult<'chat.history'>> {
  const p = readParams('chat.history', params);
  p.only(['key', 'limit', 'beforeSeq', 'offset']);
  const session = await requireSession(ctx.store, ctx.config, p.string('key'));
  const limit = Math.min(
    Math.floor(p.optionalNumber('limit', 1) ?? HISTORY_DEFAULT_LIMIT),
    HISTORY_MAX_LIMIT,
  );
  const beforeSeq = p.optionalNumber('beforeSeq', 0);
  const offset = Math.floor(p.optionalNumber('offset', 0) ?? 0);
  const messages = await ctx.store.readTail(session.key, limit, {
    ...(beforeSeq === undefined ? {} : { beforeSeq }),
    ...(offset > 0 ? { offset } : {}),
  });
  return { sessionKey: session.key, messages, total: await ctx.store.countMessages(session.key) };
}

/**
 * `chat.send`: delivers text to a session's chat through the delivery pipeline (send policy
 * enforced; a denial never reaches the plugin). A delivered message is recorded in the transcript
 * as an assistant message carrying its platform message id.
 *
 * @returns the delivery outcome (`delivered`, `denied`, `skipped` or `failed`)
 * @throws `SESSION_NOT_FOUND`, `INVALID_ARGUMENT`
 */
export async function chatSend(ctx: RuntimeContext, params: unknown): Promise<GatewayResult<'chat.send'>> {
  const p = readParams('chat.send', params);
  p.only(['key', 'text', 'replyToMessageId']);
  const session = await requireSession(ctx.store, ctx.config, p.string('key'));
  const text = (params as { text?: unknown }).text;
  if (typeof text !== 'string' || text.trim() === '') {
    throw new ColloquyError('INVALID_ARGUMENT', 'chat.send: "text" must be a non-empty string.', {
      field: 'text',
    });
  }
  const replyToMessageId = p.optionalString('replyToMessageId');
  const outcome = await ctx.deliver({
    session,
    kind: 'chat.send',
    message: { text, ...(replyToMessageId ? { replyToMessageId } : {}) },
  });
  if (outcome.status === 'delivered') {
    const now = ctx.clock.now();
    const recorded = await ctx.store.transaction(async (tx) => {
      if (!(await tx.getSession(session.key))) return false;
      await tx.appendMessages(session.key, [
        {
          role: 'assistant',
          content: text,
          timestamp: now,
          platformMessageId: outcome.messageId,
          details: { source: 'chat.send' },
        },
      ]);
      await tx.patchSession(session.key, { updatedAt: now });
      return true;
    });
    if (recorded) {
      ctx.events.emit({ type: 'session.updated', sessionKey: session.key });
      fireDueWatchesLater(ctx, session.key);
    }
  }
  return outcome;
}
