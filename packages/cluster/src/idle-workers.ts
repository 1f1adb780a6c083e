import type { Worker, WorkerEvents } from 'graphile-worker';

/** The idle workers of one graphile-worker pool, to wake without touching the busy ones. */
export interface IdleWorkers {
  /** How many workers wait for a nudge or their poll. */
  readonly size: number;
  /** Makes up to `count` idle workers look for a job now; returns how many it woke. */
  wake(count: number): number;
}

/**
 * Follows a pool's workers through its events: a worker is idle from the moment it found no job
 * (or failed to look) until it starts looking again. graphile-worker's own `pool.nudge` cannot tell
 * idle from busy workers and flags every busy one it passes to look again after its job, which in
 * a lane of hundreds would be a wasted query per turn.

 *
 * @param events - the pool's event emitter, before the pool starts
 * @returns the idle set
 */
export function trackIdleWorkers(events: WorkerEvents): IdleWorkers {
  const idle = new Set<Worker>();
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
  events.on('worker:getJob:empty', ({ worker }) => idle.add(worker));
  events.on('worker:getJob:error', ({ worker }) => idle.add(worker));
  events.on('worker:getJob:start', ({ worker }) => idle.delete(worker));
  events.on('worker:release', ({ worker }) => idle.delete(worker));
  return {
    get size() {
      return idle.size;
    },
    wake,
  };
}
