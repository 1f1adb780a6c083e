import { EventEmitter } from 'node:events';
import type { Lane, Logger } from '@colloquy/core';
import type { ClusterHandlers, LaneLimits } from '@colloquy/runtime';
import {
  Logger as GraphileLogger,
  type Runner,
  run,
  type TaskList,
  type WorkerEvents,
} from 'graphile-worker';
import type pg from 'pg';

const LANES: readonly Lane[] = ['main', 'subagent', 'cron'];

/** The task that runs a run of `lane`. One runner per lane, so each lane has its own limit. */
export const runTask = (lane: Lane): string => `colloquy_run_${lane}`;
/** The task that drains a requester's announces. */
export const DRAIN_TASK = 'colloquy_drain';
/** How many drain jobs one instance runs at once. */
const DRAIN_CONCURRENCY = 2;

/** The named queue of a session: graphile-worker runs its jobs one at a time across instances. */
export const sessionQueue = (sessionKey: string): string => `session:${sessionKey}`;

/**
 * The statement that adds a job (run in the caller's transaction when there is one). The job key
 * makes adding twice harmless: a waiting job with the key is updated, not doubled.
 */
export const ADD_JOB_SQL =
  "SELECT graphile_worker.add_job($1, $2::json, queue_name => $3, job_key => $4, job_key_mode => 'preserve_run_at')";

/** The job of a run, as the parameters of {@link ADD_JOB_SQL}. */
export function runJobParams(run: { runId: string; sessionKey: string; lane: Lane }): unknown[] {
  return [
    runTask(run.lane),
    JSON.stringify({ runId: run.runId }),
    sessionQueue(run.sessionKey),
    `run:${run.runId}`,
  ];
}

/** The drain job of a requester, as the parameters of {@link ADD_JOB_SQL}. */
export function drainJobParams(requesterSessionKey: string): unknown[] {
  return [
    DRAIN_TASK,
    JSON.stringify({ sessionKey: requesterSessionKey }),
    sessionQueue(requesterSessionKey),
    `drain:${requesterSessionKey}`,
  ];
}

/** Options of {@link startWorkers}. */
export interface WorkersOptions {
  pool: pg.Pool;
  handlers: ClusterHandlers;
  limits: LaneLimits;
  /** At most this many jobs of one lane at once on this instance, whatever the lane's limit. */
  maxJobsPerLane: number;
  /** How often idle workers look for jobs due later (new jobs arrive by LISTEN at once). */
  pollIntervalMs: number;
  /**
   * Called with each worker id and pool id as it is created, before it looks for a job (jobs are
   * locked by worker id, named queues by pool id).
   */
  onWorker(workerId: string): void;
  log: Logger;
}

/** The running graphile-worker runners of this instance. */
export interface Workers {
  /** Takes no new jobs; resolves once the jobs in flight have settled. */
  stop(): Promise<void>;
}

/**
 * Starts one graphile-worker runner per lane (concurrency = the lane's limit, at most
 * `maxJobsPerLane`) and one for drains.
 * graphile-worker's `localQueue` stays off: with it, jobs of one named queue could run at once.
 *
 * @param options - pool, handlers, limits and timing
 * @returns the runners
 */
export async function startWorkers(options: WorkersOptions): Promise<Workers> {
  const { handlers, log } = options;
  const logger = graphileLogger(log);
  const specs: { concurrency: number; taskList: TaskList }[] = LANES.map((lane) => ({
    // Every graphile-worker worker polls while idle: a lane of 128 would be 128 pollers.
    concurrency: Math.max(1, Math.min(options.maxJobsPerLane, Math.floor(options.limits[lane]))),
    taskList: { [runTask(lane)]: async (payload) => handlers.runJob(field(payload, 'runId')) },
  }));
  specs.push({
    concurrency: DRAIN_CONCURRENCY,
    taskList: { [DRAIN_TASK]: async (payload) => handlers.drainJob(field(payload, 'sessionKey')) },
  });
  const runners: Runner[] = [];
  try {
    for (const spec of specs) {
      const events: WorkerEvents = new EventEmitter();
      // Jobs are locked by worker id, named queues by pool id: both are registered.
      events.on('pool:create', ({ workerPool }) => options.onWorker(workerPool.id));
      events.on('worker:create', ({ worker }) => options.onWorker(worker.workerId));
      runners.push(
        await run({
          pgPool: options.pool,
          concurrency: spec.concurrency,
          taskList: spec.taskList,
          pollInterval: options.pollIntervalMs,
          noHandleSignals: true,
          events,
          logger,
        }),
      );
    }
  } catch (error) {
    await Promise.allSettled(runners.map((runner) => runner.stop()));
    throw error;
  }
  return {
    async stop() {
      await Promise.allSettled(runners.map((runner) => runner.stop()));
    },
  };
}

function field(payload: unknown, name: string): string {
  const value = (payload as Record<string, unknown> | null)?.[name];
  if (typeof value !== 'string' || value === '') {
    throw new Error(`A Colloquy job without "${name}" in its payload; it was not added by Colloquy.`);
  }
  return value;
}

function graphileLogger(log: Logger): GraphileLogger {
  return new GraphileLogger(() => (level, message, meta) => {
    const fields = { ...meta, component: 'graphile-worker' };
    if (level === 'error') log.error(fields, message);
    else if (level === 'warning') log.warn(fields, message);
    else log.debug(fields, message);
  });
}
