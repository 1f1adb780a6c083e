import { type ChannelLease, ColloquyError, type Logger } from '@colloquy/core';
import type pg from 'pg';
import { LOCK_CLASS } from './lock-keys.js';

/** Options of {@link acquireLease}. */
export interface LeaseOptions {
  /** Opens a new dedicated connection: the lease lives exactly as long as it. */
  connect(): Promise<pg.Client>;
  /** How often a standby instance tries the lock. */
  retryMs: number;
  /** How often the holder checks its connection is still alive. */
  heartbeatMs: number;
  log: Logger;
  signal?: AbortSignal;
}

/**
 * Waits for the advisory lock of `name` on a dedicated connection and returns it as a lease. The
 * server releases a session lock the moment its connection ends, so when the holder dies (or its
 * network does) a standby's next try takes it. The holder's connection is checked every
 * `heartbeatMs`; a failed check or a connection error aborts `lost`.
 *
 * @param name - the connection's name (`telegram:<botId>`, ...)
 * @param options - connection, timings, logger and a stop signal
 * @returns the lease, once held
 * @throws `ABORTED` when `signal` aborts first
 */
export async function acquireLease(name: string, options: LeaseOptions): Promise<ChannelLease> {
  const { signal, log } = options;
  for (;;) {
    throwIfAborted(signal, name);
    let client: pg.Client | undefined;
    try {
      client = await options.connect();
      const standby = client;
      standby.on('error', () => {});
      for (;;) {
        throwIfAborted(signal, name);
        const result = await standby.query<{ held: boolean }>(
          'SELECT pg_try_advisory_lock($1, hashtext($2)) AS held',
          [LOCK_CLASS.lease, name],
        );
        if (result.rows[0]?.held) return holdLease(name, standby, options);
        await sleep(options.retryMs, signal);
      }
    } catch (error) {
      await client?.end().catch(() => {});
      if (signal?.aborted) throw abortedError(name);
      log.warn({ err: (error as Error).message, lease: name }, 'cluster: lease connection failed; retrying');
      await sleep(options.retryMs, signal);
    }
  }
}

function holdLease(name: string, client: pg.Client, options: LeaseOptions): ChannelLease {
  const lost = new AbortController();
  let released = false;
  const lose = (why: string) => {
    if (released || lost.signal.aborted) return;
    options.log.warn({ lease: name, why }, 'cluster: lease lost; another instance may take over');
    lost.abort(new ColloquyError('ABORTED', `The lease "${name}" was lost: ${why}.`));
    void client.end().catch(() => {});
  };
  client.on('error', (error) => lose(error.message));
  client.on('end', () => lose('the connection ended'));
  const heartbeat = setInterval(() => {
    client.query('SELECT 1').catch((error: Error) => lose(error.message));
  }, options.heartbeatMs);
  heartbeat.unref();
  options.log.info({ lease: name }, 'cluster: lease held');
  return {
    lost: lost.signal,
    async release() {
      if (released) return;
      released = true;
      clearInterval(heartbeat);
      await client.end().catch(() => {});
    },
  };
}

function throwIfAborted(signal: AbortSignal | undefined, name: string): void {
  if (signal?.aborted) throw abortedError(name);
}

function abortedError(name: string): ColloquyError {
  return new ColloquyError('ABORTED', `Stopped waiting for the lease "${name}".`, { lease: name });
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
