import type pg from 'pg';
import { LOCK_CLASS } from './lock-keys.js';

/** The schema of the cluster's own table (graphile-worker keeps its jobs in `graphile_worker`). */
export const CLUSTER_SCHEMA = 'colloquy_cluster';

/**
 * Creates the instance registry when missing (one row per live instance with the graphile-worker
 * ids its workers lock jobs with) and the relay table of channel payloads. Instances starting at once take turns under an advisory lock.
 *
 * @param client - a connection outside any transaction
 */
export async function ensureClusterSchema(client: pg.ClientBase): Promise<void> {
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1, 0)', [LOCK_CLASS.schema]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${CLUSTER_SCHEMA}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${CLUSTER_SCHEMA}.instances (
         id text PRIMARY KEY,
         worker_ids text[] NOT NULL DEFAULT '{}',
         host text NOT NULL,
         pid integer NOT NULL,
         started_at timestamptz NOT NULL DEFAULT now()
       )`,
    );
    // Channel relays too large for a NOTIFY payload (8000 bytes) travel through this table.
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${CLUSTER_SCHEMA}.relay (
         id bigserial PRIMARY KEY,
         payload jsonb NOT NULL,
         created_at timestamptz NOT NULL DEFAULT now()
       )`,
    );
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
}
