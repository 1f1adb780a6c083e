import { hostname } from 'node:os';
import { type BackoffOptions, backoffDelay, type Logger } from '@colloquy/core';
import { sleep, toColloquyError } from '@colloquy/core/internal';
import type pg from 'pg';
import { CLUSTER_SCHEMA } from './cluster-schema.js';
import { LOCK_CLASS } from './lock-keys.js';

/** What one pass of the reaper did. */
export interface ReapReport {
  /** Instances found dead (their lock was free): their jobs were unlocked and their row removed. */
  dead: string[];
  /** Worker ids no live instance registered, whose jobs were locked longer than the grace. */
  orphanWorkers: string[];
  /**
   * Session queues (graphile-worker named queues) that stayed locked longer than the grace while
   * none of their jobs was locked, and were freed: a session's turns would otherwise wait for them.
   */
  strandedQueues: string[];
}

/** This instance's entry in the cluster: its liveness lock, its worker ids, the reaper. */
export interface InstanceRegistry {
  readonly id: string;
  /**
   * Since when (epoch ms) the control connection is down and being reopened; `undefined` while it
   * is up.
   */
  readonly disconnectedSince: number | undefined;
  /** Records a graphile-worker id of this instance (before or soon after it locks a job). */
  addWorker(workerId: string): Promise<void>;
  /** Unlocks the jobs of instances that died, and of workers nobody registered (after a grace). */
  reap(): Promise<ReapReport>;
  /** Leaves the cluster: removes the row and releases the lock. Idempotent. */
  leave(): Promise<void>;
}

/** Options of {@link joinCluster}. */
export interface JoinOptions {
  id: string;
  /** Opens a new control connection, when the one in use failed. */
  connect(): Promise<pg.Client>;
  /**
   * Jobs locked by a worker id no instance registered, and named queues left locked without a
   * locked job, are unlocked after this long.
   */
  orphanGraceMs: number;
  /**
   * For this long after the server started, an instance whose lock is free is not taken for dead:
   * a restarted server freed every lock, and the instances are reconnecting to take theirs again.
   */
  restartGraceMs: number;
  /** Unlocks the jobs (and named queues) of worker pools that no longer run (`forceUnlockWorkers`). */
  unlockWorkers(workerIds: string[]): Promise<void>;
  log: Logger;
  /**
   * Called once when this instance was taken for dead while its control connection was down (its
   * row is gone when it reconnects): other instances run its jobs, so it must stop running turns.
   */
  onLost(error: Error): void;
}

/** How long the control connection waits between its tries to reopen. */
const RECONNECT_BACKOFF: BackoffOptions = { initialDelayMs: 100, maxDelayMs: 2000 };

/**
 * Joins the cluster on a dedicated control connection: takes this instance's liveness lock (a
 * session-level advisory lock, held as long as the connection lives, released by the server the
 * moment the process dies) and writes the instance's row. The reaper, run by every instance, reads
 * the other rows and tries each one's lock: a lock it can take belongs to an instance that is
 * gone, whose locked jobs (and named queues) it unlocks with `options.unlockWorkers` (graphile-worker's
 * `forceUnlockWorkers`) so another instance runs them at once instead of after graphile-worker's
 * four hours.
 *
 * A control connection that fails (the server restarted, the network) is reopened with backoff,
 * and takes the lock again. Its row still there means no instance took it for dead meanwhile (a
 * reaper holds the lock while it removes a row, so the two cannot cross), and it carries on; its
 * row gone means its jobs were unlocked for the others, and it reports `onLost`. Right after a
 * server start every lock is free, so for `restartGraceMs` after it the reaper takes no instance
 * for dead: they are reconnecting.
 *
 * @param client - a connected client this registry owns from now on
 * @param options - id, grace and callbacks
 * @returns the registry
 */
export async function joinCluster(client: pg.Client, options: JoinOptions): Promise<InstanceRegistry> {
  const { id, log } = options;
  const table = `${CLUSTER_SCHEMA}.instances`;
  await client.query('SELECT pg_advisory_lock($1, hashtext($2))', [LOCK_CLASS.instance, id]);
  await client.query(
    `INSERT INTO ${table} (id, host, pid) VALUES ($1, $2, $3)
     ON CONFLICT (id) DO UPDATE SET worker_ids = '{}', started_at = now()`,
    [id, hostname(), process.pid],
  );
  let left = false;
  let lost = false;
  /** When the reaper last looked for stranded named queues (it looks at most once per grace). */
  let strandedCheckedAt = 0;
  let control = client;
  let disconnectedSince: number | undefined;
  const stopped = new AbortController();
  // One statement at a time on the control connection (the reaper and worker registration share it).
  let tail: Promise<unknown> = Promise.resolve();
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const next = tail.then(work, work);
    tail = next.catch(() => {});
    return next;
  };
  const watch = (connection: pg.Client) => {
    const failed = (error: Error) => {
      if (connection !== control || left || lost || disconnectedSince !== undefined) return;
      disconnectedSince = Date.now();
      log.warn({ err: error.message }, 'cluster: the control connection failed; reopening it');
      void serial(reconnect);
    };
    connection.on('error', failed);
    connection.on('end', () => failed(new Error('the control connection to PostgreSQL ended')));
  };
  watch(client);

  /** Reopens the control connection until it holds the lock again, or finds this instance reaped. */
  async function reconnect(): Promise<void> {
    await control.end().catch(() => {});
    for (let attempt = 0; !left; attempt++) {
      let next: pg.Client | undefined;
      try {
        next = await options.connect();
        next.on('error', () => {});
        await next.query('SELECT pg_advisory_lock($1, hashtext($2))', [LOCK_CLASS.instance, id]);
        const row = await next.query(`SELECT 1 FROM ${table} WHERE id = $1`, [id]);
        if (row.rowCount === 0) {
          lost = true;
          await next.end().catch(() => {});
          options.onLost(
            new Error(
              'this instance was taken for dead while its connection to PostgreSQL was down, and its jobs were given to the other instances',
            ),
          );
          return;
        }
        control = next;
        watch(next);
        log.info(
          { downMs: Date.now() - (disconnectedSince ?? Date.now()) },
          'cluster: the control connection is back',
        );
        disconnectedSince = undefined;
        return;
      } catch (error) {
        await next?.end().catch(() => {});
        log.debug(
          { err: (error as Error).message, attempt },
          'cluster: could not reopen the control connection',
        );
        await sleep(backoffDelay(attempt, RECONNECT_BACKOFF), stopped.signal).catch(() => {});
      }
    }
  }

  return {
    id,
    get disconnectedSince() {
      return disconnectedSince;
    },
    async addWorker(workerId) {
      await serial(() =>
        control.query(`UPDATE ${table} SET worker_ids = array_append(worker_ids, $2) WHERE id = $1`, [
          id,
          workerId,
        ]),
      );
    },

    // Not behind a reconnect in progress: there is nothing to reap without the control connection.
    reap: () =>
      disconnectedSince === undefined
        ? serial(reap)
        : Promise.resolve({ dead: [], orphanWorkers: [], strandedQueues: [] }),

    leave: () => {
      // A reconnect in progress gives up at once; the leave then runs after it.
      left = true;
      stopped.abort();
      return serial(leave);
    },
  };

  async function reap(): Promise<ReapReport> {
    const report: ReapReport = { dead: [], orphanWorkers: [], strandedQueues: [] };
    if (left || lost || disconnectedSince !== undefined) return report;
    const client = control;
    const fresh = await client.query<{ fresh: boolean }>(
      'SELECT now() - pg_postmaster_start_time() < make_interval(secs => $1) AS fresh',
      [options.restartGraceMs / 1000],
    );
    const restarted = fresh.rows[0]?.fresh === true;
    const others = await client.query<{ id: string; worker_ids: string[] }>(
      `SELECT id, worker_ids FROM ${table} WHERE id <> $1`,
      [id],
    );
    for (const other of others.rows) {
      if (restarted) break;
      const probe = await client.query<{ free: boolean }>(
        'SELECT pg_try_advisory_lock($1, hashtext($2)) AS free',
        [LOCK_CLASS.instance, other.id],
      );
      if (!probe.rows[0]?.free) continue;
      try {
        await options.unlockWorkers(other.worker_ids);
        await client.query(`DELETE FROM ${table} WHERE id = $1`, [other.id]);
        report.dead.push(other.id);
      } finally {
        await client.query('SELECT pg_advisory_unlock($1, hashtext($2))', [LOCK_CLASS.instance, other.id]);
      }
    }
    // graphile-worker's documented `jobs` view: a named queue is locked exactly while one of its
    // jobs is, by the same worker pool, so the locked jobs name every pool that holds something.
    const orphans = await client.query<{ worker: string }>(
      `SELECT DISTINCT locked_by AS worker FROM graphile_worker.jobs AS locked
         WHERE locked_by IS NOT NULL
           AND locked_at < now() - make_interval(secs => $1)
           AND NOT EXISTS (SELECT 1 FROM ${table} i WHERE locked.locked_by = ANY (i.worker_ids))`,
      [options.orphanGraceMs / 1000],
    );
    report.orphanWorkers = orphans.rows.map((row) => row.worker);
    // Relayed payloads are read within moments of their notice; old ones are garbage.
    await client.query(
      `DELETE FROM ${CLUSTER_SCHEMA}.relay WHERE created_at < now() - interval '10 minutes'`,
    );
    if (report.orphanWorkers.length > 0) {
      await options.unlockWorkers(report.orphanWorkers);
    }
    if (report.dead.length + report.orphanWorkers.length > 0) {
      log.warn(report, 'cluster: unlocked the jobs of instances that stopped');
    }
    if (Date.now() - strandedCheckedAt >= options.orphanGraceMs) {
      strandedCheckedAt = Date.now();
      report.strandedQueues = await freeStrandedQueues(client, options.orphanGraceMs).catch(
        (error: unknown) => {
          log.warn({ err: (error as Error).message }, 'cluster: could not look for stranded session queues');
          return [];
        },
      );
      if (report.strandedQueues.length > 0) {
        log.warn(
          { queues: report.strandedQueues },
          'cluster: freed session queues left locked without a running job',
        );
      }
    }
    return report;
  }

  async function leave(): Promise<void> {
    try {
      if (!lost && disconnectedSince === undefined) {
        await control.query(`DELETE FROM ${table} WHERE id = $1`, [id]);
        await control.query('SELECT pg_advisory_unlock($1, hashtext($2))', [LOCK_CLASS.instance, id]);
      }
    } catch (error) {
      log.warn({ err: toColloquyError(error).message }, 'cluster: could not leave cleanly');
    } finally {
      await control.end().catch(() => {});
    }
  }
}

/**
 * Frees the named queues locked for longer than `graceMs` while none of their jobs is locked.
 * graphile-worker locks a session's queue together with the job it takes, and frees it as it
 * completes that job, but only for the pool that took it: a failed pool's late completion of a job
 * another pool took again deletes the job and leaves the queue locked by the other pool, and the
 * session's next turns would wait for it forever (graphile-worker frees queues only after four
 * hours). Taking and completing a job each change job and queue in one statement, so a queue
 * without a locked job past the grace is stranded.
 *
 * This reads graphile-worker's private tables (its documented `jobs` view does not show queue
 * locks); test/graphile-worker-reliance.test.ts fails, saying so, if a release changes them.
 *
 * @param client - a connection to the cluster's database
 * @param graceMs - how long a queue must have been locked
 * @returns the names of the queues it freed
 */
export async function freeStrandedQueues(
  client: pg.Pool | pg.ClientBase,
  graceMs: number,
): Promise<string[]> {
  const { rows } = await client.query<{ queue_name: string }>(
    `UPDATE graphile_worker._private_job_queues AS queues
        SET locked_at = NULL, locked_by = NULL
      WHERE queues.locked_at < now() - make_interval(secs => $1)
        AND NOT EXISTS (SELECT 1 FROM graphile_worker._private_jobs AS jobs
                         WHERE jobs.job_queue_id = queues.id AND jobs.locked_at IS NOT NULL)
      RETURNING queues.queue_name`,
    [graceMs / 1000],
  );
  return rows.map((row) => row.queue_name);
}
