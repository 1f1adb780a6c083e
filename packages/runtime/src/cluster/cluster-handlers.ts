import type { ChannelRelay, Logger } from '@colloquy/core';
import type { RuntimeContext } from '../runtime/runtime-context.js';
import type { ClusterAdapter, ClusterHandlers } from './cluster-adapter.js';
import { runJob } from './run-job.js';

/**
 * What the runtime does for a cluster: runs jobs, drain jobs, and events from other instances
 * (a run that ended wakes local `agent.wait` callers; an abort stops the run if it runs here; a
 * steer lets the running turn here take its message; a channel relay reaches the local plugin).
 *
 * @param ctx - the runtime internals
 * @param relays - the channel plugins' relay subscribers
 * @returns the handlers `ClusterAdapter.start` gets
 */
export function clusterHandlers(ctx: RuntimeContext, relays: ChannelRelays): ClusterHandlers {
  return {
    runJob: (runId) => runJob(ctx, runId),
    drainJob: (requesterSessionKey) => ctx.subagents.drainRequester(requesterSessionKey),
    onEvent(event) {
      if (event.type === 'run.ended') ctx.waiters.notify(event.runId);
      else if (event.type === 'run.abort') ctx.queue.abort(event.runId, 'killed', event.reason);
      else if (event.type === 'session.steered') ctx.subagents.noteSteered(event.sessionKey);
      else relays.deliver(event.channel, event.payload);
    },
  };
}

/**
 * Publishes this instance's run endings to the other instances, so `agent.wait` answers wherever
 * it was called.
 *
 * @param ctx - the runtime internals
 * @param cluster - the cluster
 */
export function bridgeClusterEvents(ctx: RuntimeContext, cluster: ClusterAdapter): void {
  ctx.events.subscribe((event) => {
    if (event.type !== 'run.ended') return;
    ctx.track(
      cluster.publish({
        type: 'run.ended',
        runId: event.runId,
        sessionKey: event.sessionKey,
        status: event.status,
      }),
    );
  });
}

/** The relay subscribers of this instance's channel plugins (see `ChannelContext.relay`). */
export interface ChannelRelays {
  /** The relay offered to one plugin. */
  relayFor(channel: string, cluster: ClusterAdapter): ChannelRelay;
  /** Hands a payload another instance relayed to the local plugin's subscribers. */
  deliver(channel: string, payload: unknown): void;
}

/**
 * Creates the relay registry.
 *
 * @param log - for handlers that throw
 * @returns the registry
 */
export function createChannelRelays(log: Logger): ChannelRelays {
  const handlers = new Map<string, Set<(payload: unknown) => void>>();
  return {
    relayFor(channel, cluster) {
      return {
        publish: (payload) => cluster.publish({ type: 'channel.relay', channel, payload }),
        subscribe(handler) {
          let set = handlers.get(channel);
          if (!set) {
            set = new Set();
            handlers.set(channel, set);
          }
          set.add(handler);
          return () => set.delete(handler);
        },
      };
    },
    deliver(channel, payload) {
      for (const handler of handlers.get(channel) ?? []) {
        try {
          handler(payload);
        } catch (error) {
          log.warn({ err: error, channel }, 'a channel relay handler failed');
        }
      }
    },
  };
}
