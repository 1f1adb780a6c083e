import { randomUUID } from 'node:crypto';
import { ColloquyError, type TranscriptMessage } from '@colloquy/core';
import type { AgentRunResult } from '@colloquy/core/gateway';
import type { ModelMessage } from '@colloquy/core/model';
import type { MessageProvenance } from '@colloquy/core/store';
import { toModelMessages } from '../agent/build-prompt.js';
import type { RuntimeContext } from '../runtime/runtime-context.js';

/** Inbox ids of steering messages start with this. */
export const STEER_PREFIX = 'steer:';

/**
 * `agent` with `steer: true`: puts a message in the inbox of a session that has an active run,
 * where the running turn takes it before its next model step (see {@link takeSteering}), or, when
 * the turn ends first, the session's next turn does.
 *
 * @param ctx - the runtime internals
 * @param steered - sessions with steering messages waiting (read by {@link takeSteering})
 * @param sessionKey - the session (internal key)
 * @param message - the steering text
 * @param provenance - who steers
 * @returns the active run (the one that will read the message)
 * @throws `SESSION_NOT_FOUND`; `CONFLICT` when the session has no queued or running run
 */
export async function steerSession(
  ctx: RuntimeContext,
  steered: Set<string>,
  sessionKey: string,
  message: string,
  provenance: MessageProvenance | undefined,
): Promise<AgentRunResult> {
  const { store } = ctx;
  if (!(await store.getSession(sessionKey))) {
    throw new ColloquyError('SESSION_NOT_FOUND', `agent: no session "${sessionKey}" to steer.`, {
      key: sessionKey,
    });
  }
  const activeId =
    ctx.queue.runningBatch(sessionKey)?.[0]?.id ??
    ctx.queue.pendingItems(sessionKey)[0]?.id ??
    (ctx.cluster ? await activeRunIdInStore(ctx, sessionKey) : undefined);
  const run = activeId ? await store.getRun(activeId) : undefined;
  if (!run) {
    throw new ColloquyError(
      'CONFLICT',
      `agent: ${sessionKey} has no queued or running run to steer; send it a message instead.`,
      { key: sessionKey },
    );
  }
  const now = ctx.clock.now();
  const entry: TranscriptMessage = {
    role: 'user',
    content: message,
    timestamp: now,
    provenance: provenance ?? { kind: 'system' },
    details: { steer: { runId: run.runId } },
  };
  await store.putInbox({ sessionKey, id: `${STEER_PREFIX}${randomUUID()}`, message: entry, createdAt: now });
  steered.add(sessionKey);
  if (ctx.cluster) {
    // The turn may run on another instance: tell it to look (the next turn reads the inbox anyway).
    ctx.track(ctx.cluster.publish({ type: 'session.steered', sessionKey }));
    // And it may have ended since it was read above, past the inbox check of its end: the wake
    // queues a turn only when, holding the session row, no run of it is queued or running.
    ctx.track(ctx.wake(sessionKey));
  }
  return { runId: run.runId, sessionKey, status: run.status };
}

/** The session's running run on any instance, else its oldest queued one. */
async function activeRunIdInStore(ctx: RuntimeContext, sessionKey: string): Promise<string | undefined> {
  const active = await ctx.store.listRuns({ sessionKey, statuses: ['queued', 'running'] });
  return (active.find((run) => run.status === 'running') ?? active.at(-1))?.runId;
}

/**
 * Takes the steering messages waiting for a running turn: appends them to the transcript and
 * marks them consumed in one transaction, and returns them as model messages for the next step.
 * Other inbox entries (announces) wait for the next turn.
 *
 * @param ctx - the runtime internals
 * @param steered - sessions with steering messages waiting; checked first, so turns of sessions
 *   nobody steered cost nothing
 * @param sessionKey - the running session
 * @returns model messages to add before the next model call (often none)
 */
export async function takeSteering(
  ctx: RuntimeContext,
  steered: Set<string>,
  sessionKey: string,
): Promise<ModelMessage[]> {
  if (!steered.delete(sessionKey)) return [];
  const taken = await ctx.store.transaction(async (tx) => {
    if (!(await tx.getSession(sessionKey))) return [];
    const entries = (await tx.listInbox(sessionKey)).filter((entry) => entry.id.startsWith(STEER_PREFIX));
    if (entries.length === 0) return [];
    const messages = entries.map((entry) => entry.message);
    await tx.appendMessages(sessionKey, messages);
    await tx.consumeInbox(
      sessionKey,
      entries.map((entry) => entry.id),
      ctx.clock.now(),
    );
    return messages;
  });
  return taken.length === 0 ? [] : toModelMessages(taken);
}
