/** What `run.json` and the health endpoint say about a database this instance cannot reach. */
export interface DatabaseOutage {
  /** Always `unreachable`: a database that answers is not reported. */
  state: 'unreachable';
  /** Epoch ms since when this instance has not reached the database. */
  since: number;
}

/**
 * Reports a database this instance has not reached for at least `afterMs`; a shorter outage (a
 * server restart) is not reported.
 *
 * @param downSince - since when the database is unreachable (the cluster's `databaseDownSince`), or undefined
 * @param afterMs - how long an outage lasts before it is reported (`storage.unreachableAfterSeconds`)
 * @param now - epoch ms
 * @returns the outage to report, or undefined
 */
export function databaseOutage(
  downSince: number | undefined,
  afterMs: number,
  now: number,
): DatabaseOutage | undefined {
  if (downSince === undefined || now - downSince < afterMs) return undefined;
  return { state: 'unreachable', since: downSince };
}

/**
 * The sentence `colloquy status` and `/healthz` show for an outage.
 *
 * @param outage - the outage
 * @param now - epoch ms
 * @returns one sentence
 */
export function describeOutage(outage: DatabaseOutage, now: number): string {
  const seconds = Math.round((now - outage.since) / 1000);
  return `the database has been unreachable for ${seconds} s (since ${new Date(outage.since).toISOString()}); turns wait and resume once it is back.`;
}
