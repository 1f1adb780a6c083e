import { randomUUID } from 'node:crypto';
import {
  ColloquyError,
  checkSessionAccess,
  readSessionLineage,
  type SessionAccessDecision,
  type SessionRecord,
  type TranscriptMessage,
} from '@colloquy/core';
import { agentIdFromSessionKey, toDisplayKey } from '@colloquy/core/internal';
import type { SessionChanges, SessionWatch, StoreTransaction } from '@colloquy/core/store';
import { hasActiveRun } from '../cluster/run-job.js';
import { keyContextFor } from '../gateway/resolve-session.js';
import type { RuntimeContext } from './runtime-context.js';

/** Inbox ids of watch notices: `watch:<watch id>`, so a notice is inserted at most once. */
export const WATCH_INBOX_PREFIX = 'watch:';

/** How many due watches one sweep fires (a sweep that fills it runs again). */
const SWEEP_PAGE = 200;

/**
 * Stores a watch of `targetKey` by `watcherKey` from the target's current `stateVersion` on,
 * replacing an earlier watch of the same pair. Call it in the transaction that makes the change
 * the watcher waits for (the send's enqueue), so that change cannot slip in before the watch.
 *
 * @param ctx - the runtime internals (the config the guard reads)
 * @param tx - the open transaction
 * @param watcherKey - the session that gets the notice
 * @param targetKey - the session watched
 * @param now - the clock
 * @returns the stored watch
 * @throws `SESSION_NOT_FOUND` when either session does not exist; `FORBIDDEN` when the watcher may
 *   not see the target (the session tools' visibility guard)
 */
export async function registerWatch(
  ctx: RuntimeContext,
  tx: StoreTransaction,
  watcherKey: string,
  targetKey: string,
  now: number,
): Promise<SessionWatch> {
  const [watcher, target] = [await tx.getSession(watcherKey), await tx.getSession(targetKey)];
  if (!watcher || !target) {
    const missing = !watcher ? watcherKey : targetKey;
    throw new ColloquyError('SESSION_NOT_FOUND', `No session "${missing}" to watch from or to watch.`, {
      key: missing,
    });
  }
  const verdict = await watchVerdict(ctx, tx, watcher, target);
  if (!verdict.allowed) {
    throw new ColloquyError('FORBIDDEN', `agent: "watchBy" cannot watch this session. ${verdict.reason}`, {
      field: 'watchBy',
    });
  }
  const watch: SessionWatch = {
    watcherKey,
    targetKey,
    afterVersion: target.stateVersion ?? 0,
    id: randomUUID(),
    createdAt: now,
  };
  await tx.putWatch(watch);
  return watch;
}

/**
 * The session tools' guard on a watch (a notice names the target and counts its changes, as
 * `session_status` does), asked when the watch is set and again when its notice fires, because
 * visibility, agent-to-agent rules or the target's lineage may change in between (a restart with
 * a narrower config, say). Spec section 11.
 */
async function watchVerdict(
  ctx: RuntimeContext,
  tx: StoreTransaction,
  watcher: SessionRecord,
  target: SessionRecord,
): Promise<SessionAccessDecision> {
  const lineage = await readSessionLineage(target, (key) => tx.getSession(key));
  return checkSessionAccess({
    action: 'status',
    requesterKey: watcher.key,
    targetKey: target.key,
    targetAncestors: lineage.ancestors,
    targetInheritsFrom: lineage.inheritsFrom,
    sandboxed: watcher.sandboxed ?? false,
    config: ctx.config,
  });
}

/** True when a due watch may still fire: both sessions exist and the watcher may still see the target. */
async function mayStillSee(ctx: RuntimeContext, tx: StoreTransaction, watch: SessionWatch): Promise<boolean> {
  const [watcher, target] = [await tx.getSession(watch.watcherKey), await tx.getSession(watch.targetKey)];
  if (!watcher || !target) return false;
  if ((await watchVerdict(ctx, tx, watcher, target)).allowed) return true;
  ctx.log.info(
    { watcherKey: watch.watcherKey, targetKey: watch.targetKey },
    'dropped a watch whose target the watcher may no longer see',
  );
  return false;
}

/**
 * Fires the watches that are due (their target changed after they were set) and whose target is
 * at rest (no run queued or running): each one, in ONE transaction, puts one notice in its
 * watcher's inbox (insert-or-ignore on `watch:<id>`) and is deleted; then the watchers are woken.
 * A watch whose watcher may no longer see its target is deleted without a notice.
 *
 * Waiting for rest coalesces: a turn's messages and its run's start and end arrive as one notice
 * when the turn is over, not one per change. The store holds the watches and the versions, so
 * this is safe to call from any instance at any time: a crash before the transaction leaves the
 * watch due for the next call (the start sweep, or the target's next change), and a crash after
 * it leaves the notice in the inbox, never both and never neither. Two instances firing the same
 * watch insert the same inbox id, so the watcher gets it once.
 *
 * Called after a turn ends, after `sessions.patch` and `chat.send`, and on start (all targets).
 *
 * @param ctx - the runtime internals
 * @param targetKey - only watches of this session (default: every due watch, the start sweep)
 * @returns how many watches fired
 */
export async function fireDueWatches(ctx: RuntimeContext, targetKey?: string): Promise<number> {
  // A plain read first: most changes have no watcher, and then no transaction is opened.
  const any = await ctx.store.listWatches({ due: true, limit: 1, ...(targetKey ? { targetKey } : {}) });
  if (any.length === 0) return 0;
  let total = 0;
  for (;;) {
    if (!ctx.accepting) return total;
    const { fired, full } = await ctx.store.transaction(async (tx) => {
      const due = await tx.listWatches({ due: true, limit: SWEEP_PAGE, ...(targetKey ? { targetKey } : {}) });
      const now = ctx.clock.now();
      const resting = new Map<string, boolean>();
      const watchers: string[] = [];
      for (const watch of due) {
        let atRest = resting.get(watch.targetKey);
        if (atRest === undefined) {
          atRest = !(await hasActiveRun(tx, watch.targetKey));
          resting.set(watch.targetKey, atRest);
        }
        if (!atRest) continue;
        const changes = await tx.readChanges(watch.targetKey, watch.afterVersion);
        if (changes && (await mayStillSee(ctx, tx, watch))) {
          await tx.putInbox({
            sessionKey: watch.watcherKey,
            id: `${WATCH_INBOX_PREFIX}${watch.id}`,
            message: watchNotice(ctx, watch, changes, now),
            createdAt: now,
          });
          watchers.push(watch.watcherKey);
        }
        await tx.deleteWatch(watch.watcherKey, watch.targetKey, watch.id);
      }
      return { fired: watchers, full: due.length === SWEEP_PAGE && watchers.length > 0 };
    });
    total += fired.length;
    for (const watcherKey of new Set(fired)) {
      if (!ctx.autoWake) break;
      try {
        await ctx.wake(watcherKey);
      } catch (error) {
        ctx.log.warn({ err: error, sessionKey: watcherKey }, 'could not wake a watcher after its notice');
      }
    }
    if (!full) return total;
  }
}

/**
 * Runs {@link fireDueWatches} in the background (tracked for shutdown), logging a failure: the
 * watch stays due and the next change or start fires it.
 */
export function fireDueWatchesLater(ctx: RuntimeContext, targetKey?: string): void {
  ctx.track(
    fireDueWatches(ctx, targetKey).catch((error: unknown) => {
      ctx.log.warn({ err: error, sessionKey: targetKey }, 'firing session watches failed; will retry');
    }),
  );
}

/**
 * The notice a watcher reads: which session changed and how (kinds and counts, never content).
 *
 * @param ctx - the runtime internals (for the watcher's display of the key)
 * @param watch - the watch that fired
 * @param changes - the target's changes after the watch's version
 * @param now - the clock
 */
export function watchNotice(
  ctx: RuntimeContext,
  watch: SessionWatch,
  changes: SessionChanges,
  now: number,
): TranscriptMessage {
  const keys = keyContextFor(ctx.config, agentIdFromSessionKey(watch.watcherKey));
  const target = toDisplayKey(watch.targetKey, keys);
  const { message, status, patch } = changes.changes;
  const parts = [
    message > 0 ? `${message} new message${message === 1 ? '' : 's'}` : undefined,
    status > 0 ? `${status} run status change${status === 1 ? '' : 's'}` : undefined,
    patch > 0 ? `${patch} settings change${patch === 1 ? '' : 's'}` : undefined,
  ].filter((part): part is string => part !== undefined);
  const what = parts.length > 0 ? parts.join(', ') : 'changes older than the kept log';
  return {
    role: 'user',
    content:
      `Session ${target}, which you watch, changed (stateVersion ${changes.fromVersion} -> ${changes.toVersion}): ` +
      `${what}${changes.truncated ? ' (and older changes no longer counted)' : ''}. ` +
      'Read it with sessions_history; the watch has ended (send with watch: true to watch again).',
    timestamp: now,
    provenance: { kind: 'system', sourceSessionKey: watch.targetKey, sourceTool: 'sessions_send' },
    details: {
      watch: {
        id: watch.id,
        sessionKey: target,
        fromVersion: changes.fromVersion,
        toVersion: changes.toVersion,
        changes: changes.changes,
        truncated: changes.truncated,
      },
    },
  };
}
