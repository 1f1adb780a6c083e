import type { Worker, WorkerEvents } from 'graphile-worker';

/** The idle workers of one graphile-worker pool, to wake without touching the busy ones. */
export interface IdleWorkers {
  /** How many workers wait for a wake or their own poll. */
  readonly size: number;
  /** How many workers are looking for a job right now (each may take one that is ready). */
  readonly looking: number;
  /** Makes up to `count` idle workers look for a job now; returns how many it woke. */
  wake(count: number): number;
}

/**
 * Follows a pool's workers through its events: a worker is idle from the moment it found no job
 * (or failed to look) until it starts looking again. graphile-worker's own `pool.nudge` cannot tell
 * idle from busy workers and flags every busy one it passes to look again after its job, which in
 * a lane of hundreds would be wasted queries on every turn.
 *
 * @param events - the pool's event emitter, before the pool starts
 * @returns the idle set
 */
export function trackIdleWorkers(events: WorkerEvents): IdleWorkers {
  const idle = new Set<Worker>();
  let looking = 0;
  const wake = (count: number) => {
    let woken = 0;
    for (const worker of idle) {
      if (woken >= count) break;
      idle.delete(worker);
      try {
        if (worker.nudge()) woken++;
      } catch {
        // A worker released while idle no longer takes nudges.
      }
    }
    return woken;
  };
  const found = (worker: Worker, isIdle: boolean) => {
    looking = Math.max(0, looking - 1);
    if (isIdle) idle.add(worker);
  };
  events.on('worker:getJob:start', ({ worker }) => {
    idle.delete(worker);
    looking++;
  });
  events.on('worker:getJob:empty', ({ worker }) => found(worker, true));
  events.on('worker:getJob:error', ({ worker }) => found(worker, true));
  events.on('job:start', ({ worker }) => found(worker, false));
  events.on('worker:release', ({ worker }) => idle.delete(worker));
  return {
    get size() {
      return idle.size;
    },
    get looking() {
      return looking;
    },
    wake,
  };
}
