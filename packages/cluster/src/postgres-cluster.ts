import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { type ChannelLease, ColloquyError, type Logger, silentLogger } from '@colloquy/core';
import type { Lane } from '@colloquy/core/gateway';
import type { StoreTransaction } from '@colloquy/core/store';
import type { ClusterAdapter, ClusterEvent, ClusterHandlers, LaneLimits } from '@colloquy/runtime';
import { type PostgresStore, redactDatabaseUrl } from '@colloquy/store-postgres';
import { makeWorkerUtils, type WorkerUtils } from 'graphile-worker';
import pg from 'pg';
import { acquireLease } from './advisory-lease.js';
import { type ClusterEvents, listenForEvents } from './cluster-events.js';
import { ensureClusterSchema } from './cluster-schema.js';
import { graphileLogger } from './graphile-logger.js';
import { type InstanceRegistry, joinCluster, type ReapReport } from './instance-registry.js';
import { addJob, addJobInTransaction, drainJob, runJob, startWorkers, type Workers } from './job-queue.js';

/** Options of {@link createPostgresCluster}. */
export interface PostgresClusterOptions {
  /** The same database as the store: `postgres://user:password@host:5432/database`. */
  url: string;
  /** Names this instance in the registry and in logs. Default `<host>-<pid>-<random>`. */
  instanceId?: string;
  /** Most pooled connections for jobs and notices (LISTEN, leases and the control connection are extra). Default 10. */
  maxConnections?: number;
  /**
   * At most this many runs of one lane at once on this instance, below `runtime.lanes`. Default:
   * no cap, the lane's limit. A turn holds its job (and so a graphile-worker worker) while it waits
   * for the model, so this caps turns in flight: at 16, 200 one-second turns take 12.5 s. Idle
   * workers cost the database nothing between the instance's polls (see `pollIntervalMs`), so a
   * cap is only for sharing the model across instances.
   */
  maxJobsPerLane?: number;
  /**
   * How often the instance looks, in one query whatever the number of workers, for jobs that
   * became ready without a notice: retries whose time came, a session's next job after its turn
   * ended on another runner or instance, jobs the reaper unlocked. New jobs wake idle workers at
   * once by LISTEN/NOTIFY. Default 1000 ms.
   */
  pollIntervalMs?: number;
  /** How often this instance looks for instances that died, to take over their jobs. Default 1000 ms. */
  reapIntervalMs?: number;
  /**
   * Jobs locked by a worker that no live instance registered, and session queues locked while none
   * of their jobs is, are unlocked after this long. Default 30,000 ms.
   */
  orphanGraceMs?: number;
  /**
   * For this long after the PostgreSQL server started, no instance is taken for dead: a restart
   * freed every instance's liveness lock, and they are reconnecting (within a few seconds of the
   * server's return) to take theirs again. An instance that died meanwhile has its jobs taken
   * over once this has passed. Default 15,000 ms.
   */
  restartGraceMs?: number;
  /** How often a standby instance tries a channel lease. Default 500 ms. */
  leaseRetryMs?: number;
  /** How often a lease holder checks its connection. Default 5000 ms. */
  leaseHeartbeatMs?: number;
  /**
   * Called once if this instance was taken for dead: its control connection to PostgreSQL was down
   * (it is reopened with backoff) long enough for another instance to unlock its jobs, which the
   * others now run. It must stop running turns. A server restart alone does not call it: every
   * instance takes its lock again within `restartGraceMs`. Default: log the error. The reference
   * app shuts down and exits 1, for its supervisor to restart it.
   */
  onInstanceLost?(error: Error): void;
  /** Default silent. */
  logger?: Logger;
}

/**
 * Several Colloquy instances on one PostgreSQL database, queued by graphile-worker: the
 * `ClusterAdapter` (`@colloquy/runtime`) a runtime takes as `cluster`, plus channel leases and the reaper.
 */
export interface PostgresCluster extends ClusterAdapter {
  /** This instance's id in the registry. */
  readonly instanceId: string;
  /**
   * A lease for a single-connection channel (`ChannelContext.lease`): resolves once this instance
   * holds the advisory lock of `name`.
   */
  lease(name: string, signal?: AbortSignal): Promise<ChannelLease>;
  /** Looks for dead instances now (it also runs every `reapIntervalMs`). */
  reap(): Promise<ReapReport>;
  /**
   * Since when (epoch ms) this instance cannot reach the database: its control connection failed
   * and is being reopened. `undefined` while connected.
   */
  readonly databaseDownSince: number | undefined;
}

/**
 * Connects a cluster member to the database: runs graphile-worker's migrations and creates the
 * instance registry when missing, joins it, and opens the notice channel. Jobs are taken only
 * once the runtime calls `start`.
 *
 * Pass the same database as the store, and the cluster to `createRuntime({ store, cluster })`.
 * Only a `PostgresStore` (`@colloquy/store-postgres`) can add jobs in its transactions; another store is refused.
 *
 * @param options - the database URL and timings
 * @returns the cluster member
 * @throws ColloquyError `STORE_ERROR` when the database cannot be reached (the message has no password)
 * @example
 * ```ts
 * const store = await openPostgresStore({ url });
 * const cluster = await createPostgresCluster({ url });
 * const runtime = createRuntime({ config, store, cluster });
 * await runtime.start();
 * ```
 */
export async function createPostgresCluster(options: PostgresClusterOptions): Promise<PostgresCluster> {
  const log = options.logger ?? silentLogger;
  const instanceId = options.instanceId ?? `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  const settings = {
    pollIntervalMs: options.pollIntervalMs ?? 1000,
    reapIntervalMs: options.reapIntervalMs ?? 1000,
    orphanGraceMs: options.orphanGraceMs ?? 30_000,
    restartGraceMs: options.restartGraceMs ?? 15_000,
    leaseRetryMs: options.leaseRetryMs ?? 500,
    leaseHeartbeatMs: options.leaseHeartbeatMs ?? 5000,
  };
  const connectionString = options.url;
  const pool = new pg.Pool({
    connectionString,
    max: options.maxConnections ?? 10,
    application_name: 'colloquy-cluster',
  });
  pool.on('error', (error) => log.warn({ err: error.message }, 'cluster: a pooled connection failed'));
  // A checked-out connection that fails must not crash the process (graphile-worker asks for this too).
  pool.on('connect', (client) => {
    client.on('error', (error) => log.warn({ err: error.message }, 'cluster: a connection failed'));
  });
  const connect = async () => {
    const client = new pg.Client({ connectionString, application_name: 'colloquy-cluster', keepAlive: true });
    await client.connect();
    return client;
  };

  let stopped = false;
  let lost = false;
  const instanceLost = (error: Error) => {
    if (lost || stopped) return;
    lost = true;
    if (options.onInstanceLost) options.onInstanceLost(error);
    else log.error({ err: error.message }, 'cluster: this instance can no longer run jobs');
  };

  const failed = async (error: unknown, utils?: WorkerUtils): Promise<never> => {
    await utils?.release();
    await pool.end().catch(() => {});
    throw new ColloquyError(
      'STORE_ERROR',
      `Could not join the Colloquy cluster on ${redactDatabaseUrl(connectionString)}: ${(error as Error).message}`,
      {},
      { cause: error },
    );
  };
  // graphile-worker's public door for everything but running jobs; making it runs the migrations.
  const utils = await makeWorkerUtils({ pgPool: pool, logger: graphileLogger(log) }).catch((error: unknown) =>
    failed(error),
  );
  let registry: InstanceRegistry;
  try {
    const control = await connect();
    await ensureClusterSchema(control);
    registry = await joinCluster(control, {
      id: instanceId,
      connect,
      orphanGraceMs: settings.orphanGraceMs,
      restartGraceMs: settings.restartGraceMs,
      unlockWorkers: (workerIds) => utils.forceUnlockWorkers(workerIds),
      log,
      onLost: instanceLost,
    });
  } catch (error) {
    return failed(error, utils);
  }

  let workers: Workers | undefined;
  let events: ClusterEvents | undefined;
  let reaper: NodeJS.Timeout | undefined;
  let reaping: Promise<ReapReport> | undefined;
  const leases = new Set<ChannelLease>();

  const sqlIn = (tx: StoreTransaction) => {
    if (!hasSql(tx)) {
      throw new ColloquyError(
        'CONFIG_INVALID',
        'A Colloquy cluster needs the PostgreSQL store (openPostgresStore) on the same database; the runtime was given another store.',
      );
    }
    return tx.sql.bind(tx);
  };
  const reap = () => {
    reaping ??= registry
      .reap()
      .then((report) => {
        // The jobs it unlocked sent no notice: wake idle workers for them now.
        if (report.dead.length + report.orphanWorkers.length + report.strandedQueues.length > 0) {
          void workers?.lookForReadyJobs();
        }
        return report;
      })
      .finally(() => {
        reaping = undefined;
      });
    return reaping;
  };

  return {
    instanceId,

    get databaseDownSince() {
      return registry.disconnectedSince;
    },

    async scheduleRun(run, tx) {
      await addJobInTransaction(sqlIn(tx), runJob(run));
    },

    async requeueRun(run: { runId: string; sessionKey: string; lane: Lane }) {
      await addJob(utils, runJob(run));
    },

    async scheduleDrain(requesterSessionKey, tx) {
      await addJobInTransaction(sqlIn(tx), drainJob(requesterSessionKey));
    },

    async requestDrain(requesterSessionKey) {
      if (stopped) return;
      await addJob(utils, drainJob(requesterSessionKey));
    },

    async publish(event: ClusterEvent) {
      await events?.publish(event);
    },

    async start(handlers: ClusterHandlers, limits: LaneLimits) {
      if (workers) throw new ColloquyError('CONFLICT', 'This cluster member was started already.');
      events = await listenForEvents({
        instanceId,
        connect,
        query: (text, values) => pool.query(text, values),
        onEvent: handlers.onEvent,
        log,
      });
      // Jobs a dead instance left locked are free before this one takes its first.
      await reap();
      workers = await startWorkers({
        pool,
        handlers,
        limits,
        maxJobsPerLane: options.maxJobsPerLane ?? Number.POSITIVE_INFINITY,
        pollIntervalMs: settings.pollIntervalMs,
        onWorker: (poolId) => {
          registry.addWorker(poolId).catch((error: unknown) => {
            log.warn({ err: (error as Error).message, poolId }, 'cluster: could not register a worker pool');
          });
        },
        unlockWorkers: (poolIds) => utils.forceUnlockWorkers(poolIds),
        log,
      });
      reaper = setInterval(() => {
        reap().catch((error: unknown) => log.warn({ err: (error as Error).message }, 'cluster: reap failed'));
      }, settings.reapIntervalMs);
      reaper.unref();
      log.info({ instanceId }, 'cluster: taking jobs');
    },

    async stop() {
      if (stopped) return;
      stopped = true;
      if (reaper) clearInterval(reaper);
      await workers?.stop();
      await events?.close();
      await Promise.allSettled([...leases].map((lease) => lease.release()));
      await reaping?.catch(() => {});
      await registry.leave();
      await utils.release();
      await pool.end().catch(() => {});
    },

    async lease(name, signal) {
      const lease = await acquireLease(name, {
        connect,
        retryMs: settings.leaseRetryMs,
        heartbeatMs: settings.leaseHeartbeatMs,
        log,
        ...(signal ? { signal } : {}),
      });
      leases.add(lease);
      return {
        lost: lease.lost,
        async release() {
          leases.delete(lease);
          await lease.release();
        },
      };
    },

    reap,
  };
}

function hasSql(tx: StoreTransaction): tx is StoreTransaction & { sql: PostgresStore['sql'] } {
  return typeof (tx as { sql?: unknown }).sql === 'function';
}
