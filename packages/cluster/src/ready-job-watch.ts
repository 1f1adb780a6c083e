import type { Logger } from '@colloquy/core';
import type pg from 'pg';
import type { IdleWorkers } from './idle-workers.js';

/**
 * How many jobs of each given task a worker could take now: not locked, attempts left, due, and
 * not behind a running job of their named queue (graphile-worker locks a named queue exactly while
 * one of its jobs is locked). It reads `graphile_worker.jobs`, the view graphile-worker documents as
 * its stable interface to waiting jobs (its tables are private and change between releases); a
 * count that is off by a little only wakes a worker for nothing or leaves a job to the next look.
 */
const READY_JOBS_SQL = `
SELECT jobs.task_identifier AS task, count(*)::int AS ready
  FROM graphile_worker.jobs AS jobs
 WHERE jobs.locked_at IS NULL
   AND jobs.attempts < jobs.max_attempts
   AND jobs.run_at <= now()
   AND jobs.task_identifier = ANY($1::text[])
   AND (jobs.queue_name IS NULL OR NOT EXISTS (
         SELECT 1 FROM graphile_worker.jobs AS running
          WHERE running.queue_name = jobs.queue_name AND running.locked_at IS NOT NULL))
 GROUP BY jobs.task_identifier`;

/** The idle workers of a pool and the tasks it runs. */
export interface WatchedPool {
  idle: IdleWorkers;
  tasks: readonly string[];
}

/** Options of {@link watchReadyJobs}. */
export interface ReadyJobWatchOptions {
  query(text: string, values: unknown[]): Promise<pg.QueryResult<{ task: string; ready: number }>>;
  /** The pools to wake, as they are created. */
  pools(): readonly WatchedPool[];
  intervalMs: number;
  log: Logger;
}

/** A running {@link watchReadyJobs}. */
export interface ReadyJobWatch {
  /**
   * Looks now (or once more right after the look in progress, however often it is called
   * meanwhile); resolves when the pools were woken.
   */
  check(): Promise<void>;
  stop(): void;
}

/**
 * How an instance's idle workers learn of jobs. Every new job's notice (graphile-worker's
 * `jobs:insert`, routed here from each pool's `nudge`) and a timer every `intervalMs` start one
 * query that counts the ready jobs of each pool's tasks, and as many idle workers of that pool wake
 * as there are ready jobs beyond the workers already looking. The timer finds jobs that become
 * runnable without a notice: a retry whose time came, a job queued behind another job of its
 * session that another runner or instance just finished, jobs the reaper unlocked.
 *
 * Left to itself, graphile-worker has every idle worker poll (hundreds of queries a second for a
 * lane of hundreds) and every pool answer every notice with a fetch, though each pool runs other
 * tasks; those fetches lock all free named queues while they run, so they also make the one fetch
 * that could succeed come back empty. The query is skipped while no worker is idle (busy workers
 * look for their next job as they finish).
 *
 * @param options - how to query, which pools, how often
 * @returns the watch, to stop
 */
export function watchReadyJobs(options: ReadyJobWatchOptions): ReadyJobWatch {
  const { log } = options;
  let checking: Promise<void> | undefined;
  const check = async () => {
    // Busy workers look for their next job as they finish: only idle ones need the query.
    const pools = options.pools().filter((p) => p.idle.size > 0);
    if (pools.length === 0) return;
    const tasks = pools.flatMap((p) => p.tasks);
    const { rows } = await options.query(READY_JOBS_SQL, [tasks]);
    const ready = new Map(rows.map((row) => [row.task, row.ready]));
    for (const { idle, tasks: poolTasks } of pools) {
      // Workers already looking take ready jobs too; waking more would only find nothing.
      const count = poolTasks.reduce((n, task) => n + (ready.get(task) ?? 0), 0) - idle.looking;
      if (count > 0) idle.wake(count);
    }
  };
  let again: Promise<void> | undefined;
  const tick = (): Promise<void> => {
    if (checking) {
      // A job added while the query ran may not be in its answer: look once more after it.
      again ??= checking.then(() => {
        again = undefined;
        return tick();
      });
      return again;
    }
    checking = check()
      .catch((error: unknown) =>
        log.warn({ err: (error as Error).message }, 'cluster: looking for ready jobs failed'),
      )
      .finally(() => {
        checking = undefined;
      });
    return checking;
  };
  const timer = setInterval(tick, options.intervalMs);
  timer.unref();
  return {
    check: tick,
    stop() {
      clearInterval(timer);
    },
  };
}
