import type { RuntimeContext } from '../runtime/runtime-context.js';
import type { AnnounceDelivery } from './announce-delivery.js';

/** What the drain needs from the registry. */
export interface AnnounceDrainDeps {
  /** The announce delivery steps. */
  delivery: AnnounceDelivery;
  /** False before `start()` and after `stop()`: nothing is delivered then. */
  isRunning(): boolean;
  /** Runs background work until shutdown (its failure is logged). */
  track(work: Promise<unknown>): void;
  /** Cleans up a child whose announce is finished (see `finishChild`). */
  finish(childKey: string): Promise<void>;
}

/** An outbox row as the drain learns of it once written. */
export interface WrittenRow {
  requesterSessionKey: string;
  childSessionKey: string;
  /** No announce to deliver: the child only needs its cleanup. */
  skipped: boolean;
}

/** Who drains when: one drain per requester at a time, while the requester is idle. */
export interface AnnounceDrain {
  /** Notes rows that were committed; they are drained at the end of this event-loop turn. */
  afterWrite(rows: readonly WrittenRow[]): void;
  /** Drains what was noted while the registry was not running yet. */
  flush(): void;
  /** Starts a requester's drain, or asks the running one to go again. */
  requestDrain(requesterKey: string, force?: boolean): void;
  /** Delivers the due pending rows of one requester now. */
  drainRequester(requesterKey: string, force: boolean): Promise<void>;
  /** Delivers every due pending row (`force`: also those waiting for a retry) and waits for it. */
  drain(options?: { force?: boolean }): Promise<void>;
  /** True while the requester may have pending rows (a hint: the store is the truth). */
  isWaiting(requesterKey: string): boolean;
  /** Resolves once the drains in flight have ended. */
  idle(): Promise<void>;
}

/**
 * Creates the drain scheduler of the announce outbox (one process; a cluster's drain runs as a
 * job in the requester's queue instead, see `ctx.cluster.requestDrain`).
 *
 * @param ctx - the runtime internals
 * @param deps - delivery steps, the registry's state, background work and child cleanup
 * @returns the drain scheduler
 */
export function createAnnounceDrain(ctx: RuntimeContext, deps: AnnounceDrainDeps): AnnounceDrain {
  const { store, log } = ctx;
  const { delivery } = deps;
  /** Requesters with pending rows (a hint: the store is the truth). */
  const waiting = new Set<string>();
  /** Requesters with rows written since the last flush. */
  const fresh = new Set<string>();
  const draining = new Map<string, Promise<void>>();
  const again = new Set<string>();
  const toFinish = new Set<string>();
  let flushScheduled = false;

  function afterWrite(rows: readonly WrittenRow[]): void {
    for (const row of rows) {
      if (row.skipped) toFinish.add(row.childSessionKey);
      else {
        waiting.add(row.requesterSessionKey);
        fresh.add(row.requesterSessionKey);
      }
    }
    flush();
  }

  /** Drains what was written, at the end of this event-loop turn (batching every commit in it). */
  function flush(): void {
    if (flushScheduled || !deps.isRunning()) return;
    flushScheduled = true;
    setImmediate(() => {
      flushScheduled = false;
      for (const key of [...fresh]) {
        fresh.delete(key);
        requestDrain(key);
      }
      for (const child of [...toFinish]) {
        toFinish.delete(child);
        deps.track(deps.finish(child));
      }
    });
  }

  function requestDrain(requesterKey: string, force = false): void {
    if (!deps.isRunning()) return;
    if (ctx.cluster) {
      // One drain per requester across instances: its job runs in the requester's queue.
      deps.track(ctx.cluster.requestDrain(requesterKey));
      return;
    }
    if (draining.has(requesterKey)) {
      again.add(requesterKey);
      return;
    }
    const work = (async () => {
      do {
        again.delete(requesterKey);
        await drainRequester(requesterKey, force);
      } while (again.has(requesterKey) && deps.isRunning());
    })().finally(() => draining.delete(requesterKey));
    draining.set(requesterKey, work);
    deps.track(work);
  }

  async function drainRequester(requesterKey: string, force: boolean): Promise<void> {
    const now = ctx.clock.now();
    const rows = await store.listOutbox({
      statuses: ['pending'],
      requesterSessionKey: requesterKey,
      ...(force ? {} : { dueBefore: now }),
    });
    if (rows.length === 0) {
      const left = await store.listOutbox({
        statuses: ['pending'],
        requesterSessionKey: requesterKey,
        limit: 1,
      });
      if (left.length === 0) waiting.delete(requesterKey);
      return;
    }
    const requester = await store.getSession(requesterKey);
    if (!requester) {
      for (const row of rows) await delivery.guarded(row, () => delivery.park(row));
      return;
    }
    // Busy: the running turn could not read it anyway; its end drains again (turnSettled).
    if (ctx.queue.runningBatch(requesterKey)) return;
    try {
      await delivery.putInInbox(rows, requester);
    } catch (error) {
      for (const row of rows) await delivery.retryLater(row, error);
      return;
    }
    for (const row of rows) {
      if (!deps.isRunning()) return;
      await delivery.guarded(row, () => delivery.settle(row, requester));
    }
    if (ctx.autoWake) {
      try {
        await ctx.wake(requesterKey);
      } catch (error) {
        log.warn({ err: error, sessionKey: requesterKey }, 'could not wake the requester after an announce');
      }
    }
  }

  async function drain(options: { force?: boolean } = {}): Promise<void> {
    const now = ctx.clock.now();
    const rows = await store.listOutbox({
      statuses: ['pending'],
      ...(options.force ? {} : { dueBefore: now }),
    });
    const keys = new Set(rows.map((row) => row.requesterSessionKey));
    for (const key of keys) {
      waiting.add(key);
      requestDrain(key, options.force ?? false);
    }
    await idle();
  }

  async function idle(): Promise<void> {
    await Promise.all([...draining.values()]);
  }

  return {
    afterWrite,
    flush,
    requestDrain,
    drainRequester,
    drain,
    isWaiting: (requesterKey) => waiting.has(requesterKey),
    idle,
  };
}
