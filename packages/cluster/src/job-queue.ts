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
import { trackIdleWorkers } from './idle-workers.js';
import { type WatchedPool, watchReadyJobs } from './ready-job-watch.js';

const LANES: readonly Lane[] = ['main', 'subagent', 'cron'];

/** The task that runs a run of `lane`. One runner per lane, so each lane has its own limit. */
export const runTask = (lane: Lane): string => `colloquy_run_${lane}`;
/** The task that drains a requester's announces. */
export const DRAIN_TASK = 'colloquy_drain';
/** How many drain jobs one instance runs at once. */
const DRAIN_CONCURRENCY = 2;
/**
 * How often each idle graphile-worker worker looks for jobs by itself. The instance's one watcher
 * ({@link watchReadyJobs}, every `pollIntervalMs`) wakes them when a job becomes ready without a
 * notice, so this is only a backstop; kept long because a lane of 256 workers would otherwise
 * send 256 queries per interval while idle.
 */
const WORKER_BACKSTOP_POLL_MS = 5 * 60_000;

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
  /**
   * How often the instance looks, in one query, for jobs that became ready without a notice (due
   * retries, a session's next job after its turn ended elsewhere, jobs the reaper unlocked). New
   * jobs arrive by LISTEN at once.
   */
  pollIntervalMs: number;
  /**
   * Called with each worker pool id as it is created, before its workers look for a job
   * (graphile-worker 0.17 locks jobs and named queues by pool id).
   */
  onWorker(poolId: string): void;
  /**
   * Called when a runner could not record the outcome of a job (the database went away as the job
   * ended) and stops by itself, unless the runners are stopping anyway: the job stays locked to this
   * instance, so the instance must stop for the others to run it.
   */
  onOutcomeLost(error: Error): void;
  log: Logger;
}

/** The running graphile-worker runners of this instance. */
export interface Workers {
  /** Looks for jobs that became ready without a notice now (as every `pollIntervalMs`), e.g. after a reap. */
  lookForReadyJobs(): Promise<void>;
  /** Takes no new jobs; resolves once the jobs in flight have settled. */
  stop(): Promise<void>;
}

/**
 * Starts one graphile-worker runner per lane (concurrency = the lane's limit, at most
 * `maxJobsPerLane`) and one for drains, and the watcher that wakes their idle workers.
 * graphile-worker's `localQueue` stays off: with it, jobs of one named queue could run at once.
 * A job lasts as long as its turn (it holds the session's named queue), so a lane runs as many
 * turns at once as it has workers. The watcher decides which idle workers wake, for new jobs'
 * notices (each pool's `nudge` is routed to it) and every `pollIntervalMs`; the workers' own idle
 * poll is a rare backstop, which makes a lane of hundreds cheap while idle.
 *
 * @param options - pool, handlers, limits and timing
 * @returns the runners
 */
export async function startWorkers(options: WorkersOptions): Promise<Workers> {
  const { handlers, log } = options;
  const logger = graphileLogger(log);
  const specs: { concurrency: number; taskList: TaskList }[] = LANES.map((lane) => ({
    concurrency: Math.max(1, Math.min(options.maxJobsPerLane, Math.floor(options.limits[lane]))),
    taskList: { [runTask(lane)]: async (payload) => handlers.runJob(field(payload, 'runId')) },
  }));
  specs.push({
    concurrency: DRAIN_CONCURRENCY,
    taskList: { [DRAIN_TASK]: async (payload) => handlers.drainJob(field(payload, 'sessionKey')) },
  });
  const runners: Runner[] = [];
  const pools: WatchedPool[] = [];
  let stopping = false;
  const watch = watchReadyJobs({
    query: (text, values) => options.pool.query(text, values),
    pools: () => pools,
    intervalMs: options.pollIntervalMs,
    log,
  });
  const stopAll = async () => {
    stopping = true;
    watch.stop();
    pools.length = 0;
    await Promise.allSettled(runners.map((runner) => runner.stop()));
  };
  try {
    for (const spec of specs) {
      const events: WorkerEvents = new EventEmitter();
      // graphile-worker 0.17 locks jobs and named queues by pool id: that is what the reaper frees.
      events.on('pool:create', ({ workerPool }) => {
        options.onWorker(workerPool.id);
        // A new job's notice reaches every pool; the watcher wakes only the pool of its task.
        workerPool.nudge = () => void watch.check();
      });
      // Logged by graphile-worker already; only the instance's owner must hear of it.
      events.on('pool:fatalError', ({ error }) => {
        if (!stopping) options.onOutcomeLost(error instanceof Error ? error : new Error(String(error)));
      });
      pools.push({ idle: trackIdleWorkers(events), tasks: Object.keys(spec.taskList) });
      runners.push(
        await run({
          pgPool: options.pool,
          concurrency: spec.concurrency,
          taskList: spec.taskList,
          pollInterval: WORKER_BACKSTOP_POLL_MS,
          noHandleSignals: true,
          events,
          logger,
          // Unbatched, graphile-worker records a job's outcome without awaiting it: a database that is
          // unreachable as a job ends (a shutdown while the server is down) rejects with nobody
          // listening, which crashes the process. Batched, the failure is caught and logged, and
          // reported as `pool:fatalError`. A delay of 0 batches only what ends in the same tick.
          preset: { worker: { completeJobBatchDelay: 0, failJobBatchDelay: 0 } },
        }),
      );
    }
  } catch (error) {
    await stopAll();
    throw error;
  }
  return { lookForReadyJobs: watch.check, stop: stopAll };
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
