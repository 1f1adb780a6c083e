// @colloquy/cluster: several Colloquy instances on one PostgreSQL, queued by graphile-worker.

export type { ReapReport } from './instance-registry.js';
export {
  createPostgresCluster,
  type PostgresCluster,
  type PostgresClusterOptions,
} from './postgres-cluster.js';
