import type { Logger } from '@colloquy/core';
import type { ClusterEvent } from '@colloquy/runtime';
import type pg from 'pg';
import { CLUSTER_SCHEMA } from './cluster-schema.js';

/** The NOTIFY channel the instances talk on. */
export const EVENTS_CHANNEL = 'colloquy_cluster';

/** Events between instances over LISTEN/NOTIFY. */
export interface ClusterEvents {
  /** Sends an event to every other instance (best effort: a notice can be lost with a connection). */
  publish(event: ClusterEvent): Promise<void>;
  /** Stops listening. Idempotent. */
  close(): Promise<void>;
}

/** Options of {@link listenForEvents}. */
export interface ListenOptions {
  /** This instance (its own notices are ignored). */
  instanceId: string;
  /** Opens a new dedicated connection (for LISTEN, reopened when it drops). */
  connect(): Promise<pg.Client>;
  /** Runs a statement on a pooled connection (NOTIFY, relay payloads). */
  query(text: string, values: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
  onEvent(event: ClusterEvent): void;
  log: Logger;
}

/**
 * Listens on a dedicated connection and publishes through the pool. A listening connection that
 * drops is reopened after a short pause; what was said meanwhile is lost, which is why every
 * receiver also reads the store (`agent.wait` every second, the next turn reads the inbox).
 *
 * @param options - connections, this instance's id and the handler
 * @returns the event channel
 */
export async function listenForEvents(options: ListenOptions): Promise<ClusterEvents> {
  let closed = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;

  const handle = (event: ClusterEvent) => {
    try {
      options.onEvent(event);
    } catch (error) {
      options.log.warn({ err: error }, 'cluster: an event handler failed');
    }
  };
  const onNotification = (message: pg.Notification) => {
    if (message.channel !== EVENTS_CHANNEL || !message.payload) return;
    const notice = parseNotice(message.payload);
    if (!notice || notice.from === options.instanceId) return;
    const event = notice.event;
    const relayId = (event as { relayId?: unknown }).relayId;
    if (event.type !== 'channel.relay' || typeof relayId !== 'string') return handle(event);
    const channel = event.channel;
    // A relayed payload waits in the relay table (NOTIFY carries at most 8000 bytes).
    options
      .query(`SELECT payload FROM ${CLUSTER_SCHEMA}.relay WHERE id = $1`, [relayId])
      .then(({ rows }) => {
        if (rows[0]) handle({ type: 'channel.relay', channel, payload: rows[0].payload });
      })
      .catch((error: unknown) =>
        options.log.warn({ err: (error as Error).message }, 'cluster: could not read a relayed payload'),
      );
  };

  async function open(): Promise<void> {
    const next = await options.connect();
    next.on('notification', onNotification);
    next.on('error', (error) => reopen(next, error));
    next.on('end', () => reopen(next, new Error('the connection ended')));
    await next.query(`LISTEN ${EVENTS_CHANNEL}`);
    if (closed) {
      await next.end().catch(() => {});
      return;
    }
    client = next;
  }

  function reopen(failed: pg.Client, error: Error): void {
    if (closed || client !== failed || retry) return;
    client = undefined;
    options.log.warn({ err: error.message }, 'cluster: the event connection dropped; reopening');
    failed.end().catch(() => {});
    retry = setTimeout(function again() {
      retry = undefined;
      open().catch((e: unknown) => {
        options.log.warn({ err: (e as Error).message }, 'cluster: could not reopen the event connection');
        if (!closed) retry = setTimeout(again, 1000);
      });
    }, 250);
  }

  await open();
  return {
    async publish(event) {
      if (closed) return;
      let sent: ClusterEvent | { type: 'channel.relay'; channel: string; relayId: string } = event;
      if (event.type === 'channel.relay') {
        const { rows } = await options.query(
          `INSERT INTO ${CLUSTER_SCHEMA}.relay (payload) VALUES ($1) RETURNING id::text AS id`,
          [JSON.stringify(event.payload)],
        );
        sent = { type: 'channel.relay', channel: event.channel, relayId: String(rows[0]!.id) };
      }
      const payload = JSON.stringify({ from: options.instanceId, event: sent });
      await options.query('SELECT pg_notify($1, $2)', [EVENTS_CHANNEL, payload]);
    },
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      const current = client;
      client = undefined;
      await current?.end().catch(() => {});
    },
  };
}

function parseNotice(payload: string): { from: string; event: ClusterEvent } | undefined {
  try {
    const value = JSON.parse(payload) as { from?: unknown; event?: { type?: unknown } };
    if (typeof value.from !== 'string' || typeof value.event?.type !== 'string') return undefined;
    return value as { from: string; event: ClusterEvent };
  } catch {
    return undefined;
  }
}
