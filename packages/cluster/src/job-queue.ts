import { EventEmitter } from 'node:events';
import { type BackoffOptions, backoffDelay, type Logger } from '@colloquy/core';
import type { Lane } from '@colloquy/core/gateway';
import { sleep } from '@colloquy/core/internal';
import type { ClusterHandlers, LaneLimits } from '@colloquy/runtime';
import { type Runner, run, type TaskList, type WorkerEvents, type WorkerUtils } from 'graphile-worker';
import type pg from 'pg';
import { graphileLogger } from './graphile-logger.js';
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
 * A job Colloquy adds: its task, its payload, the session's named queue, and the job key that makes
 * adding it twice harmless (a waiting job with the key is updated, not doubled; its run time kept).
 */
export interface ColloquyJob {
  task: string;
  payload: Readonly<Record<string, string>>;
  queueName: string;
  jobKey: string;
}

/** The job of a run. */
export function runJob(run: { runId: string; sessionKey: string; lane: Lane }): ColloquyJob {
  return {
    task: runTask(run.lane),
    payload: { runId: run.runId },
    queueName: sessionQueue(run.sessionKey),
    jobKey: `run:${run.runId}`,
  };
}

/** The drain job of a requester. */
export function drainJob(requesterSessionKey: string): ColloquyJob {
  return {
    task: DRAIN_TASK,
    payload: { sessionKey: requesterSessionKey },
    queueName: sessionQueue(requesterSessionKey),
    jobKey: `drain:${requesterSessionKey}`,
  };
}

/**
 * Adds a job in the caller's transaction, with graphile-worker's SQL API (`graphile_worker.add_job`),
 * so the job commits or rolls back with the run record it belongs to.
 *
 * @param sql - runs a statement in the transaction
 * @param job - the job
 */
export async function addJobInTransaction(
  sql: (text: string, values: unknown[]) => Promise<unknown>,
  job: ColloquyJob,
): Promise<void> {
  await sql(
    "SELECT graphile_worker.add_job($1, $2::json, queue_name => $3, job_key => $4, job_key_mode => 'preserve_run_at')",
    [job.task, JSON.stringify(job.payload), job.queueName, job.jobKey],
  );
}

/**
 * Adds a job outside any transaction, with graphile-worker's `WorkerUtils`.
 *
 * @param utils - the instance's worker utils
 * @param job - the job
 */
export async function addJob(utils: WorkerUtils, job: ColloquyJob): Promise<void> {
  await utils.addJob(job.task, job.payload, {
    queueName: job.queueName,
    jobKey: job.jobKey,
    jobKeyMode: 'preserve_run_at',
  });
}

/** How long a lane whose runner failed waits between its tries to start again (the database is down). */
const RESTART_BACKOFF: BackoffOptions = { initialDelayMs: 250, maxDelayMs: 2000 };
/**
 * How long a lane whose runner failed waits, once that runner's jobs settled, for its pool to
 * release (its last job outcomes written or given up) before it unlocks what the pool holds anyway.
 * A pool whose outcome writes failed more than once may never release (graphile-worker 0.17's
 * batcher miscounts them); a queue left locked then is freed by the reaper (`freeStrandedQueues`).
 */
const RELEASE_WAIT_MS = 5000;

/** Options of {@link startWorkers}. */
export interface WorkersOptions {
  pool: pg.Pool;
  handlers: ClusterHandlers;
  limits: LaneLimits;
  /** At most this many jobs of one lane at once on this instance, whatever the lane's limit. */
  maxJobsPerLane: number;
  /**
   * How often the instance looks, in one query, for jobs that became ready without a notice (due
   * retries, a session's next job after its turn ended on another runner or instance, jobs the
   * reaper unlocked). New jobs arrive by LISTEN at once.
   */
  pollIntervalMs: number;
  /**
   * Called with each worker pool id as it is created, before its workers look for a job
   * (graphile-worker locks jobs and named queues by pool id since 0.17).
   */
  onWorker(poolId: string): void;
  /**
   * Unlocks the jobs and named queues a worker pool of this instance still holds
   * (`forceUnlockWorkers`), once that pool has stopped: a pool that could not record a job's
   * outcome (the database went away as the job ended) stops, and its lane starts a new one.
   */
  unlockWorkers(poolIds: string[]): Promise<void>;
  log: Logger;
}

/** The running graphile-worker runners of this instance. */
export interface Workers {
  /** Looks for jobs that became ready without a notice now (as every `pollIntervalMs`), e.g. after a reap. */
  lookForReadyJobs(): Promise<void>;
  /** Takes no new jobs; resolves once the jobs in flight have settled. */
  stop(): Promise<void>;
}

/** What a lane knows of its runner that failed, to start a new one safely. */
interface FailedRunner {
  /** The handlers the failed runner is still running. */
  inFlight: Set<Promise<void>>;
  /** Settles once the failed runner's pool has released: it records no more job outcomes. */
  released: Promise<void>;
  /** The failed runner's pool id, whose jobs and named queues are unlocked before the new runner starts. */
  poolId: string | undefined;
}

/** One graphile-worker runner's settings: the tasks it runs and how many at once. */
interface RunnerSpec {
  concurrency: number;
  taskList: TaskList;
}

/**
 * Starts one graphile-worker runner per lane (concurrency = the lane's limit, at most
 * `maxJobsPerLane`) and one for drains, and the watcher that wakes their idle workers.
 * graphile-worker's `localQueue` stays off: it fetches and locks jobs ahead of the workers that will
 * run them, so a turn could wait locked on a busy instance while another instance has free workers.
 * A job lasts as long as its turn (it holds the session's named queue), so a lane runs as many
 * turns at once as it has workers. The watcher decides which idle workers wake, for new jobs'
 * notices (each pool's `nudge` is routed to it) and every `pollIntervalMs`; the workers' own idle
 * poll is a rare backstop, which makes a lane of hundreds cheap while idle.
 *
 * A runner that could not record a job's outcome (the database went away as the job ended) stops,
 * as graphile-worker's pools do; its lane waits until the jobs in flight of that pool settled and
 * the pool released (it records the outcomes of jobs that ended after the database came back),
 * unlocks what the pool still holds once the database answers again, and starts a new runner, so
 * the job runs again (a run job that finds its run ended only sends what was not sent).
 *
 * @param options - pool, handlers, limits and timing
 * @returns the runners
 */
export async function startWorkers(options: WorkersOptions): Promise<Workers> {
  const { handlers, log } = options;
  const logger = graphileLogger(log);
  const specs: RunnerSpec[] = LANES.map((lane) => ({
    concurrency: Math.max(1, Math.min(options.maxJobsPerLane, Math.floor(options.limits[lane]))),
    taskList: { [runTask(lane)]: async (payload) => handlers.runJob(field(payload, 'runId')) },
  }));
  specs.push({
    concurrency: DRAIN_CONCURRENCY,
    taskList: { [DRAIN_TASK]: async (payload) => handlers.drainJob(field(payload, 'sessionKey')) },
  });
  /** The runner of each spec, by index; undefined while a failed one is replaced. */
  const runners: (Runner | undefined)[] = [];
  const pools: (WatchedPool | undefined)[] = [];
  const restarts = new Set<Promise<void>>();
  const stopped = new AbortController();
  const watch = watchReadyJobs({
    query: (text, values) => options.pool.query(text, values),
    pools: () => pools.filter((pool) => pool !== undefined),
    intervalMs: options.pollIntervalMs,
    log,
  });

  const startRunner = async (index: number): Promise<void> => {
    const spec = specs[index]!;
    const events: WorkerEvents = new EventEmitter();
    let poolId: string | undefined;
    // The handlers this runner is running: a failed runner's jobs are unlocked only once they settled.
    const inFlight = new Set<Promise<void>>();
    const taskList: TaskList = {};
    for (const [name, task] of Object.entries(spec.taskList)) {
      if (task === undefined) continue;
      taskList[name] = (payload, helpers) => {
        const running = Promise.resolve(task(payload, helpers)).then(() => {});
        inFlight.add(running);
        void running.catch(() => {}).finally(() => inFlight.delete(running));
        return running;
      };
    }
    // graphile-worker locks jobs and named queues by pool id: that is what the reaper frees.
    events.on('pool:create', ({ workerPool }) => {
      poolId = workerPool.id;
      options.onWorker(workerPool.id);
      // A new job's notice reaches every pool, which wakes that many of its own workers whatever
      // the job's task. The watcher wakes only the idle workers of the pool that runs it. This has
      // no public form: graphile-worker has no option to route its `jobs:insert` notices, so the
      // pool's own `nudge(count)` (public, called by the pool on each notice) is replaced.
      // test/graphile-worker-reliance.test.ts fails, saying so, if a release stops calling it.
      workerPool.nudge = () => void watch.check();
    });
    // Logged by graphile-worker already; the pool shuts itself down, and the lane starts anew.
    events.once('pool:fatalError', () => {
      if (stopped.signal.aborted || runners[index] === undefined) return;
      runners[index] = undefined;
      pools[index] = undefined;
      const restart = restartRunner(index, { inFlight, released, poolId }).finally(() =>
        restarts.delete(restart),
      );
      restarts.add(restart);
    });
    // Once the pool is released it writes nothing more: its last job outcomes were recorded or failed.
    const released = new Promise<void>((resolve) => events.once('pool:release', () => resolve()));
    const idle = trackIdleWorkers(events);
    const runner = await run({
      pgPool: options.pool,
      concurrency: spec.concurrency,
      taskList,
      pollInterval: WORKER_BACKSTOP_POLL_MS,
      noHandleSignals: true,
      events,
      logger,
      // Unbatched, graphile-worker records a job's outcome without awaiting it: a database that is
      // unreachable as a job ends (a shutdown while the server is down) rejects with nobody
      // listening, which crashes the process. Batched, the failure is caught and logged, and
      // reported as `pool:fatalError`. A delay of 0 batches only what ends in the same tick.
      preset: { worker: { completeJobBatchDelay: 0, failJobBatchDelay: 0 } },
    });
    runners[index] = runner;
    pools[index] = { idle, tasks: Object.keys(spec.taskList) };
  };

  /**
   * Replaces the runner of `index`, whose pool failed, once the jobs it was running settled, its
   * pool released, and the database answers.
   *
   * The pool's release is awaited because a job that ends after the database came back is still
   * completed by the failed pool, and graphile-worker's completion deletes the job whoever holds it
   * but frees the session's named queue only if the failed pool still holds it. Unlocked before
   * that completion, the job would be taken by the new runner, deleted under it, and the session's
   * queue left locked by the new runner for good: the session's next turns would never run.
   */
  const restartRunner = async (index: number, failed: FailedRunner) => {
    const tasks = Object.keys(specs[index]!.taskList);
    log.warn(
      { tasks },
      'cluster: a job runner failed; it starts again once its jobs settled and the database answers',
    );
    const { inFlight } = failed;
    let { poolId } = failed;
    // The failing pool takes no new job (its workers were released), so this set only shrinks.
    while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    const waitOver = new AbortController();
    const poolReleased = await Promise.race([
      failed.released.then(() => true),
      sleep(RELEASE_WAIT_MS, AbortSignal.any([stopped.signal, waitOver.signal])).then(
        () => false,
        () => true,
      ),
    ]);
    waitOver.abort();
    if (!poolReleased) {
      log.info(
        { tasks, waitedMs: RELEASE_WAIT_MS },
        'cluster: a failed job runner did not release its pool in time; unlocking its jobs anyway',
      );
    }
    for (let attempt = 0; !stopped.signal.aborted; attempt++) {
      try {
        if (poolId !== undefined) await options.unlockWorkers([poolId]);
        poolId = undefined;
        await startRunner(index);
        log.info({ tasks }, 'cluster: a failed job runner started again');
        void watch.check();
        return;
      } catch (error) {
        log.warn(
          { err: (error as Error).message, attempt },
          'cluster: a job runner could not start again; retrying',
        );
        await sleep(backoffDelay(attempt, RESTART_BACKOFF), stopped.signal).catch(() => {});
      }
    }
  };

  const stopAll = async () => {
    stopped.abort();
    watch.stop();
    const running = runners.filter((runner) => runner !== undefined);
    runners.length = 0;
    pools.length = 0;
    await Promise.allSettled([...running.map((runner) => runner.stop()), ...restarts]);
    // A runner that started while the others stopped.
    await Promise.allSettled(runners.filter((runner) => runner !== undefined).map((runner) => runner.stop()));
  };
  try {
    for (const index of specs.keys()) await startRunner(index);
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
