import { ColloquyError } from '@colloquy/core';
import type { AgentInfo, GatewayResult, SessionStatus } from '@colloquy/core/gateway';
import { agentConfigFor } from '@colloquy/core/internal';
import type { SessionChanges } from '@colloquy/core/store';
import type { RuntimeContext } from '../runtime/runtime-context.js';
import { readParams } from './params.js';
import { requireSession } from './resolve-session.js';

/**
 * `agents.list`: the configured agents with their effective model.
 */
export function agentsList(ctx: RuntimeContext, params: unknown): GatewayResult<'agents.list'> {
  readParams('agents.list', params).only([]);
  const agents: AgentInfo[] = ctx.config.agents.list.map((entry) => {
    const resolved = agentConfigFor(ctx.config, entry.id);
    const info: AgentInfo = { id: entry.id };
    if (entry.name) info.name = entry.name;
    if (resolved?.default) info.default = true;
    if (resolved?.model) info.model = resolved.model;
    return info;
  });
  return { agents };
}

/**
 * `session.status`: the session, its live status (`running` while a turn runs), its
 * `stateVersion`, how many runs wait behind it, the active run and the transcript locator; with
 * `changesSince`, the kinds and counts of the changes after that version.
 *
 * @throws `SESSION_NOT_FOUND`; `INVALID_ARGUMENT` when `changesSince` is not an integer >= 0 or is
 *   ahead of the session's `stateVersion`
 */
export async function sessionStatus(
  ctx: RuntimeContext,
  params: unknown,
): Promise<GatewayResult<'session.status'>> {
  const p = readParams('session.status', params);
  p.only(['key', 'changesSince']);
  const changesSince = p.optionalNumber('changesSince', 0);
  if (changesSince !== undefined && !Number.isSafeInteger(changesSince)) {
    throw new ColloquyError(
      'INVALID_ARGUMENT',
      'session.status: "changesSince" must be a whole number (a stateVersion read earlier).',
      { field: 'changesSince' },
    );
  }
  const session = await requireSession(ctx.store, ctx.config, p.string('key'));
  const { activeRunId, queueDepth } = await activityOf(ctx, session.key);
  const status: SessionStatus = activeRunId ? 'running' : (session.status ?? 'idle');
  const locator = ctx.store.transcriptLocator(session);
  const stateVersion = session.stateVersion ?? 0;
  let changes: SessionChanges | undefined;
  if (changesSince !== undefined) {
    if (changesSince > stateVersion) {
      throw new ColloquyError(
        'INVALID_ARGUMENT',
        `session.status: changesSince ${changesSince} is ahead of the session's stateVersion ${stateVersion}; pass a stateVersion read earlier from session_status.`,
        { field: 'changesSince', stateVersion },
      );
    }
    changes = await ctx.store.readChanges(session.key, changesSince);
  }
  return {
    session,
    status,
    // The counts were read after the session: report the version they end at.
    stateVersion: changes?.toVersion ?? stateVersion,
    ...(changes ? { changes } : {}),
    queueDepth,
    ...(activeRunId ? { activeRunId } : {}),
    ...(locator ? { transcriptLocator: locator } : {}),
  };
}

/** The session's running run and how many wait: this process's queue, or with a cluster the store. */
async function activityOf(
  ctx: RuntimeContext,
  sessionKey: string,
): Promise<{ activeRunId: string | undefined; queueDepth: number }> {
  const running = ctx.queue.runningBatch(sessionKey);
  if (!ctx.cluster) return { activeRunId: running?.[0]?.id, queueDepth: ctx.queue.pendingCount(sessionKey) };
  const active = await ctx.store.listRuns({ sessionKey, statuses: ['queued', 'running'] });
  const leader = active
    .filter((run) => run.status === 'running' && run.meta?.foldedInto === undefined)
    .at(-1);
  return {
    activeRunId: running?.[0]?.id ?? leader?.runId,
    queueDepth: active.filter((run) => run.status === 'queued').length,
  };
}
