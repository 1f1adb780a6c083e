import { backoffDelay, isColloquyError, type SessionRecord } from '@colloquy/core';
import {
  agentIdFromSessionKey,
  defaultAgentId,
  mainSessionKey,
  toColloquyError,
} from '@colloquy/core/internal';
import type { AnnounceOutcome, OutboxEntry, StoreTransaction } from '@colloquy/core/store';
import type { RuntimeContext } from '../runtime/runtime-context.js';
import { startAnnounceSpan } from '../telemetry/channel-spans.js';
import {
  type AnnouncePayload,
  announceInboxId,
  announceMessage,
  type ChatOutcome,
  originTarget,
} from './announce.js';

/** What announce delivery needs from the registry. */
export interface AnnounceDeliveryDeps {
  /** First retry delay of a failed delivery; doubles each attempt. */
  retryBaseMs: number;
  /** The longest retry delay. */
  retryMaxMs: number;
  /** Runs background work until shutdown (its failure is logged). */
  track(work: Promise<unknown>): void;
  /** Cleans up a child whose announce is finished (see `finishChild`). */
  finish(childKey: string): Promise<void>;
}

/** The steps that move an outbox row from `pending` to `delivered` or `parked`. */
export interface AnnounceDelivery {
  /** Step 1: every row into the requester's inbox at once (insert-or-ignore, one transaction). */
  putInInbox(rows: readonly OutboxEntry[], requester: SessionRecord): Promise<void>;
  /** Step 2: marks a row that is in the inbox `delivered`, with how it reached the chat. */
  settle(row: OutboxEntry, requester: SessionRecord): Promise<void>;
  /** The requester is gone: the result goes to its agent's main session inbox, never dropped. */
  park(row: OutboxEntry): Promise<void>;
  /** Runs a step for a row; a failure schedules the row's retry (see {@link AnnounceDelivery.retryLater}). */
  guarded(row: OutboxEntry, step: () => Promise<void>): Promise<void>;
  /** Records a failed attempt and when the next one is due (exponential backoff). */
  retryLater(row: OutboxEntry, error: unknown): Promise<void>;
}

/**
 * Creates the delivery steps of announce outbox rows.
 *
 * @param ctx - the runtime internals
 * @param deps - retry tuning, background work and child cleanup
 * @returns the delivery steps
 */
export function createAnnounceDelivery(ctx: RuntimeContext, deps: AnnounceDeliveryDeps): AnnounceDelivery {
  const { store, log } = ctx;
  const mainKey = ctx.config.session.mainKey;

  async function putInInbox(rows: readonly OutboxEntry[], requester: SessionRecord): Promise<void> {
    const now = ctx.clock.now();
    // A requester's rows are written by its own drain only, one drain at a time: the listed rows
    // are current, so they need no second read.
    const todo = rows.filter((row) => row.status === 'pending' && row.inboxAt === undefined);
    if (todo.length === 0) return;
    const spans = todo.map((row) => {
      const payload = row.payload as unknown as AnnouncePayload;
      return startAnnounceSpan(ctx.telemetry, {
        childSessionKey: row.childSessionKey,
        runId: row.runId,
        requester: requester.key,
        status: payload.status,
        ...(payload.trace ? { trace: payload.trace } : {}),
      });
    });
    await store
      .transaction(async (tx) => {
        for (const row of todo) {
          const payload = row.payload as unknown as AnnouncePayload;
          await tx.putInbox({
            sessionKey: requester.key,
            id: announceInboxId(row.childSessionKey, row.runId),
            message: announceMessage(payload, now),
            createdAt: now,
          });
          await tx.updateOutbox(row.childSessionKey, row.runId, { inboxAt: now, updatedAt: now });
        }
      })
      .then(
        () => {
          for (const end of spans) end();
        },
        (error: unknown) => {
          for (const end of spans) end(error);
          throw error;
        },
      );
    for (const row of todo) row.inboxAt = now;
  }

  /**
   * The raw block is never posted to a chat: the requester's turn on it (the wake that follows) is
   * the one chat message about the result, in its own voice, or the plain fallback line when it
   * cannot answer (see `announceFallback`). The block goes to the log and stays in the requester's
   * transcript, where the owner reads it.
   */
  async function settle(current: OutboxEntry, requester: SessionRecord): Promise<void> {
    if (current.status !== 'pending' || current.inboxAt === undefined) return;
    const payload = current.payload as unknown as AnnouncePayload;
    const at = ctx.clock.now();
    const chat: ChatOutcome = {
      outcome: 'skipped',
      at,
      reason: originTarget(payload.origin)
        ? "the requester's own reply to it is the chat message"
        : 'the requester has no chat',
    };
    log.info(
      {
        childSessionKey: current.childSessionKey,
        runId: current.runId,
        requester: requester.key,
        status: payload.status,
        announce: payload.text,
      },
      'a sub-agent finished; its result is in the requester inbox',
    );
    await store.transaction(async (tx) => {
      await tx.updateOutbox(current.childSessionKey, current.runId, {
        status: 'delivered',
        deliveredAt: at,
        updatedAt: at,
        payload: { ...payload, chat } as unknown as Record<string, unknown>,
      });
      await recordOutcome(tx, current.runId, outcomeOf(chat, at));
    });
    current.status = 'delivered';
    if (payload.needsCleanup) deps.track(deps.finish(current.childSessionKey));
  }

  async function park(row: OutboxEntry): Promise<void> {
    const agentId = agentIdFromSessionKey(row.requesterSessionKey) ?? defaultAgentId(ctx.config);
    const owner = mainSessionKey({ agentId, mainKey, scope: ctx.config.session.scope });
    const now = ctx.clock.now();
    await store.transaction(async (tx) => {
      const current = await tx.getOutbox(row.childSessionKey, row.runId);
      if (current?.status !== 'pending') return;
      const payload = { ...(current.payload as unknown as AnnouncePayload), parkedIn: owner };
      await tx.putInbox({
        sessionKey: owner,
        id: announceInboxId(row.childSessionKey, row.runId),
        message: announceMessage(payload, now),
        createdAt: now,
      });
      await tx.updateOutbox(row.childSessionKey, row.runId, {
        status: 'parked',
        inboxAt: now,
        deliveredAt: now,
        updatedAt: now,
        payload: payload as unknown as Record<string, unknown>,
      });
      await recordOutcome(tx, row.runId, {
        outcome: 'delivered',
        reason: `parked in ${owner}: the requester ${row.requesterSessionKey} no longer exists`,
        at: now,
      });
    });
    deps.track(deps.finish(row.childSessionKey));
  }

  async function guarded(row: OutboxEntry, step: () => Promise<void>): Promise<void> {
    try {
      await step();
    } catch (error) {
      await retryLater(row, error);
    }
  }

  async function retryLater(row: OutboxEntry, error: unknown): Promise<void> {
    const message = toColloquyError(error).message;
    log.warn(
      { err: error, childSessionKey: row.childSessionKey, runId: row.runId },
      'announce delivery failed; retrying',
    );
    try {
      const current = await store.getOutbox(row.childSessionKey, row.runId);
      if (current?.status !== 'pending') return;
      const attempts = current.attempts + 1;
      const at = ctx.clock.now();
      await store.updateOutbox(row.childSessionKey, row.runId, {
        attempts,
        nextAttemptAt: at + backoff(attempts),
        lastError: message,
        updatedAt: at,
      });
    } catch (inner) {
      log.warn({ err: inner }, 'could not record an announce failure; the poll will retry');
    }
  }

  /** Deterministic (no jitter): the outbox row records when its next attempt is due. */
  function backoff(attempts: number): number {
    return backoffDelay(attempts - 1, {
      initialDelayMs: deps.retryBaseMs,
      maxDelayMs: deps.retryMaxMs,
      jitter: 0,
    });
  }

  return { putInInbox, settle, park, guarded, retryLater };
}

/** Records how the announce ended on the run (runs are never deleted; a missing one is skipped). */
async function recordOutcome(tx: StoreTransaction, runId: string, announce: AnnounceOutcome): Promise<void> {
  try {
    await tx.updateRun(runId, { announce });
  } catch (error) {
    if (!isColloquyError(error) || error.code !== 'RUN_NOT_FOUND') throw error;
  }
}

function outcomeOf(chat: ChatOutcome, at: number): AnnounceOutcome {
  return { outcome: 'delivered', reason: `in the requester inbox; ${chat.reason ?? ''}`.trim(), at };
}
