import { hostname } from 'node:os';
import type { Logger } from '@colloquy/core';
import { toColloquyError } from '@colloquy/core/internal';
import type pg from 'pg';
import { CLUSTER_SCHEMA } from './cluster-schema.js';
import { LOCK_CLASS } from './lock-keys.js';

/** What one pass of the reaper did. */
export interface ReapReport {
  /** Instances found dead (their lock was free): their jobs were unlocked and their row removed. */
  dead: string[];
  /** Worker ids no live instance registered, whose jobs were locked longer than the grace. */
  orphanWorkers: string[];
}

/** This instance's entry in the cluster: its liveness lock, its worker ids, the reaper. */
export interface InstanceRegistry {
  readonly id: string;
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
  /** Jobs locked by a worker id no instance registered are unlocked after this long. */
  orphanGraceMs: number;
  /** Unlocks the jobs (and named queues) of worker pools that no longer run (`forceUnlockWorkers`). */
  unlockWorkers(workerIds: string[]): Promise<void>;
  log: Logger;
  /** Called once when the control connection fails: other instances will soon take this one's jobs. */
  onLost(error: Error): void;
}

/**
 * Joins the cluster on a dedicated control connection: takes this instance's liveness lock (a
 * session-level advisory lock, held as long as the connection lives, released by the server the
 * moment the process dies) and writes the instance's row. The reaper, run by every instance, reads
 * the other rows and tries each one's lock: a lock it can take belongs to an instance that is
 * gone, whose locked jobs (and named queues) it unlocks with `options.unlockWorkers` (graphile-worker's
 * `forceUnlockWorkers`) so another instance runs them at once instead of after graphile-worker's
 * four hours.
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
  // One statement at a time on the control connection (the reaper and worker registration share it).
  let tail: Promise<unknown> = Promise.resolve();
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const next = tail.then(work, work);
    tail = next.catch(() => {});
    return next;
  };
  const onFailure = (error: Error) => {
    if (left || lost) return;
    lost = true;
    options.onLost(error);
  };
  client.on('error', onFailure);
  client.on('end', () => onFailure(new Error('the control connection to PostgreSQL ended')));

  return {
    id,
    async addWorker(workerId) {
      await serial(() =>
        client.query(`UPDATE ${table} SET worker_ids = array_append(worker_ids, $2) WHERE id = $1`, [
          id,
          workerId,
        ]),
      );
    },

    reap: () => serial(reap),

    leave: () => serial(leave),
  };

  async function reap(): Promise<ReapReport> {
    const report: ReapReport = { dead: [], orphanWorkers: [] };
    if (left || lost) return report;
    const others = await client.query<{ id: string; worker_ids: string[] }>(
      `SELECT id, worker_ids FROM ${table} WHERE id <> $1`,
      [id],
    );
    for (const other of others.rows) {
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
    return report;
  }

  async function leave(): Promise<void> {
    if (left) return;
    left = true;
    try {
      if (!lost) {
        await client.query(`DELETE FROM ${table} WHERE id = $1`, [id]);
        await client.query('SELECT pg_advisory_unlock($1, hashtext($2))', [LOCK_CLASS.instance, id]);
      }
    } catch (error) {
      log.warn({ err: toColloquyError(error).message }, 'cluster: could not leave cleanly');
    } finally {
      await client.end().catch(() => {});
    }
  }
}
