import { type Logger, silentLogger } from '@colloquy/core';
import type { Lane } from '@colloquy/core/gateway';
import { type StopKind, stopReason } from './stop-reason.js';

/** What the queue needs to know about a unit of work. */
export interface QueueItem {
  /** Unique id (the run id). */
  id: string;
  /** Items of one session run one batch at a time, in arrival order. */
  sessionKey: string;
  /** The lane whose concurrency limit applies. */
  lane: Lane;
  /** Abort the batch this item heads after this many ms (0 or absent: never). */
  timeoutMs?: number;
}

/** Options of {@link createCommandQueue}. */
export interface CommandQueueOptions<T extends QueueItem> {
  /** How many batches may run at once in each lane (values below 1 count as 1). */
  limits: Readonly<Record<Lane, number>>;
  /**
   * Runs one batch: the session's next item and every item folded into it. Must honour `signal`
   * and settle soon after it aborts. A rejection is logged; the queue carries on.
   */
  execute(batch: readonly T[], signal: AbortSignal): Promise<void>;
  /**
   * True when `next` (queued behind `head` in the same session) may join `head`'s turn.
   * Default: never fold.
   */
  canFold?(head: T, next: T): boolean;
  /** At most this many items in one batch (default 32). */
  maxBatch?: number;
  /**
   * Called with the ids of items that left the queue: a batch that settled, or a waiting item that
   * `abort` removed.
   */
  onDone?(ids: readonly string[]): void;
  logger?: Logger;
}

/** What {@link CommandQueue.abort} found. */
export type AbortFound<T> =
  | { state: 'queued'; item: T }
  | { state: 'running'; batch: readonly T[] }
  | { state: 'unknown' };

/** Queue figures for status output and benchmarks. */
export interface QueueStats {
  /** Per lane: its concurrency limit, the turns running, and the sessions waiting for a slot. */
  lanes: Record<Lane, { limit: number; running: number; waitingSessions: number }>;
  /** Items waiting (not running) across all sessions. */
  pending: number;
}

/**
 * A per-session serial, per-lane bounded, round-robin command queue. See {@link createCommandQueue}.
 */
export interface CommandQueue<T extends QueueItem> {
  /** Adds an item behind the session's other items and starts it when its lane has room. */
  enqueue(item: T): void;
  /**
   * Adds items in order before starting any, so items of one idle session that may fold share
   * its next batch.
   */
  enqueueAll(items: readonly T[]): void;
  /**
   * Stops an item: a waiting one is removed (and returned, so the caller can record it), a
   * running one has its batch's signal aborted with a reason of kind `kind`.
   */
  abort(id: string, kind: StopKind, message: string): AbortFound<T>;
  /** Items of a session waiting behind its running batch. */
  pendingCount(sessionKey: string): number;
  /** Waiting items of a session, in order. */
  pendingItems(sessionKey: string): readonly T[];
  /** The running batch of a session, if any. */
  runningBatch(sessionKey: string): readonly T[] | undefined;
  /** True when the item is waiting or running. */
  has(id: string): boolean;
  /** True when a batch of `lane` would start at once: the queue runs, and the lane is below its limit. */
  hasRoom(lane: Lane): boolean;
  stats(): QueueStats;
  /** Stops starting new batches (running ones continue). */
  pause(): void;
  /** Starts batches again after {@link CommandQueue.pause}. */
  resume(): void;
  /** Resolves when no batch is running. */
  idle(): Promise<void>;
  /** Aborts every running batch with the given kind; returns how many were aborted. */
  abortRunning(kind: StopKind, message: string): number;
}

const LANES: readonly Lane[] = ['main', 'subagent', 'cron'];

interface RunningBatch<T> {
  items: readonly T[];
  controller: AbortController;
}

interface SessionSlot<T> {
  key: string;
  pending: T[];
  running?: RunningBatch<T>;
  /** The lane whose ready list holds this session, while it waits for a slot. */
  readyIn?: Lane;
}

interface LaneState {
  limit: number;
  running: number;
  /** Session keys waiting for a slot, oldest first (entries may be stale; checked on pop). */
  ready: string[];
  head: number;
}

/**
 * Creates the command queue that decides when each run starts.
 *
 * - One batch at a time per session: items that arrive while a session runs wait, and items that
 *   `canFold` allows are folded into the session's next turn, in arrival order.
 * - Lanes (`main`, `subagent`, `cron`) each run at most `limits[lane]` batches at once.
 * - Fair: a lane serves waiting sessions round-robin; a session that finishes a batch and still
 *   has work goes to the back of the line, so one busy session cannot starve the others.
 * - Abort and timeout abort the batch's `AbortSignal` (see {@link stopKindOf}).
 *
 * @param options - lane limits, the executor and the fold rule
 * @returns the queue
 * @example
 * ```ts
 * const queue = createCommandQueue({
 *   limits: { main: 4, subagent: 8, cron: 2 },
 *   execute: async (batch, signal) => runTurn(batch, signal),
 *   canFold: (head, next) => head.lane === next.lane,
 * });
 * queue.enqueue({ id: 'r1', sessionKey: 'agent:main:main', lane: 'main' });
 * ```
 */
export function createCommandQueue<T extends QueueItem>(options: CommandQueueOptions<T>): CommandQueue<T> {
  const log = options.logger ?? silentLogger;
  const maxBatch = Math.max(1, options.maxBatch ?? 32);
  const sessions = new Map<string, SessionSlot<T>>();
  const owner = new Map<string, string>(); // item id -> session key
  const lanes = {} as Record<Lane, LaneState>;
  for (const lane of LANES) {
    lanes[lane] = {
      limit: Math.max(1, Math.floor(options.limits[lane] ?? 1)),
      running: 0,
      ready: [],
      head: 0,
    };
  }
  let paused = false;
  let runningTotal = 0;
  let idleWaiters: (() => void)[] = [];

  function markReady(slot: SessionSlot<T>): void {
    const head = slot.pending[0];
    if (!head || slot.running) {
      slot.readyIn = undefined;
      return;
    }
    if (slot.readyIn === head.lane) return;
    slot.readyIn = head.lane;
    lanes[head.lane].ready.push(slot.key);
  }

  function popReady(lane: Lane): SessionSlot<T> | undefined {
    const state = lanes[lane];
    while (state.head < state.ready.length) {
      const key = state.ready[state.head++]!;
      const slot = sessions.get(key);
      if (slot && !slot.running && slot.readyIn === lane && slot.pending[0]?.lane === lane) {
        slot.readyIn = undefined;
        compact(state);
        return slot;
      }
    }
    compact(state);
    return undefined;
  }

  function compact(state: LaneState): void {
    if (state.head > 1024 && state.head * 2 > state.ready.length) {
      state.ready = state.ready.slice(state.head);
      state.head = 0;
    }
  }

  function pump(): void {
    if (paused) return;
    for (const lane of LANES) {
      const state = lanes[lane];
      while (state.running < state.limit) {
        const slot = popReady(lane);
        if (!slot) break;
        start(slot, lane);
      }
    }
  }

  function takeBatch(slot: SessionSlot<T>): T[] {
    const head = slot.pending.shift()!;
    const batch = [head];
    const fold = options.canFold;
    while (fold && batch.length < maxBatch) {
      const next = slot.pending[0];
      if (!next || !fold(head, next)) break;
      batch.push(slot.pending.shift()!);
    }
    return batch;
  }

  function start(slot: SessionSlot<T>, lane: Lane): void {
    const items = takeBatch(slot);
    const controller = new AbortController();
    const running: RunningBatch<T> = { items, controller };
    slot.running = running;
    lanes[lane].running++;
    runningTotal++;
    const timeoutMs = items[0]!.timeoutMs ?? 0;
    const timer =
      timeoutMs > 0
        ? setTimeout(() => {
            controller.abort(stopReason('timeout', `The run timed out after ${timeoutMs} ms.`));
          }, timeoutMs)
        : undefined;
    timer?.unref?.();
    void Promise.resolve()
      .then(() => options.execute(items, controller.signal))
      .catch((error: unknown) => {
        log.error({ err: error, sessionKey: slot.key }, 'command queue: a batch failed');
      })
      .finally(() => {
        if (timer) clearTimeout(timer);
        finish(slot, lane, running);
      });
  }

  function finish(slot: SessionSlot<T>, lane: Lane, running: RunningBatch<T>): void {
    for (const item of running.items) owner.delete(item.id);
    options.onDone?.(running.items.map((item) => item.id));
    if (slot.running === running) slot.running = undefined;
    lanes[lane].running--;
    runningTotal--;
    if (slot.pending.length === 0 && !slot.running) sessions.delete(slot.key);
    else markReady(slot);
    pump();
    if (runningTotal === 0 && idleWaiters.length > 0) {
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }

  function add(item: T): void {
    if (owner.has(item.id)) return;
    let slot = sessions.get(item.sessionKey);
    if (!slot) {
      slot = { key: item.sessionKey, pending: [] };
      sessions.set(item.sessionKey, slot);
    }
    owner.set(item.id, item.sessionKey);
    slot.pending.push(item);
    markReady(slot);
  }

  return {
    enqueue(item) {
      add(item);
      pump();
    },

    enqueueAll(items) {
      for (const item of items) add(item);
      pump();
    },

    abort(id, kind, message) {
      const key = owner.get(id);
      const slot = key === undefined ? undefined : sessions.get(key);
      if (!slot) return { state: 'unknown' };
      const index = slot.pending.findIndex((item) => item.id === id);
      if (index >= 0) {
        const [item] = slot.pending.splice(index, 1);
        owner.delete(id);
        options.onDone?.([id]);
        if (slot.pending.length === 0 && !slot.running) sessions.delete(slot.key);
        else if (index === 0) markReady(slot);
        pump();
        return { state: 'queued', item: item! };
      }
      if (slot.running?.items.some((item) => item.id === id)) {
        slot.running.controller.abort(stopReason(kind, message));
        return { state: 'running', batch: slot.running.items };
      }
      return { state: 'unknown' };
    },

    pendingCount: (sessionKey) => sessions.get(sessionKey)?.pending.length ?? 0,
    pendingItems: (sessionKey) => [...(sessions.get(sessionKey)?.pending ?? [])],
    runningBatch: (sessionKey) => sessions.get(sessionKey)?.running?.items,
    has: (id) => owner.has(id),
    hasRoom: (lane) => !paused && lanes[lane].running < lanes[lane].limit,

    stats() {
      let pending = 0;
      for (const slot of sessions.values()) pending += slot.pending.length;
      const out = {} as QueueStats['lanes'];
      for (const lane of LANES) {
        const state = lanes[lane];
        let waitingSessions = 0;
        for (const slot of sessions.values()) if (slot.readyIn === lane && !slot.running) waitingSessions++;
        out[lane] = { limit: state.limit, running: state.running, waitingSessions };
      }
      return { lanes: out, pending };
    },

    pause() {
      paused = true;
    },

    resume() {
      paused = false;
      pump();
    },

    idle() {
      if (runningTotal === 0) return Promise.resolve();
      return new Promise<void>((resolve) => idleWaiters.push(resolve));
    },

    abortRunning(kind, message) {
      let count = 0;
      for (const slot of sessions.values()) {
        if (slot.running && !slot.running.controller.signal.aborted) {
          slot.running.controller.abort(stopReason(kind, message));
          count++;
        }
      }
      return count;
    },
  };
}
