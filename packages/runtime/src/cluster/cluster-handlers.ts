import type { RuntimeContext } from '../runtime/runtime-context.js';
import type { ClusterAdapter, ClusterHandlers } from './cluster-adapter.js';
import { runJob } from './run-job.js';

/**
 * What the runtime does for a cluster: runs jobs, drain jobs, and events from other instances
 * (a run that ended wakes local `agent.wait` callers; an abort stops the run if it runs here; a
 * steer lets the running turn here take its message).
 *
 * @param ctx - the runtime internals
 * @returns the handlers `ClusterAdapter.start` gets
 */
export function clusterHandlers(ctx: RuntimeContext): ClusterHandlers {
  return {
    runJob: (runId) => runJob(ctx, runId),
    drainJob: (requesterSessionKey) => ctx.subagents.drainRequester(requesterSessionKey),
    onEvent(event) {
      if (event.type === 'run.ended') ctx.waiters.notify(event.runId);
      else if (event.type === 'run.abort') ctx.queue.abort(event.runId, 'killed', event.reason);
      else ctx.subagents.noteSteered(event.sessionKey);
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
