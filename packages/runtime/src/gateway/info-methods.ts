import { type AgentInfo, agentConfigFor, type GatewayResult, type SessionStatus } from '@colloquy/core';
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
 * `session.status`: the session, its live status (`running` while a turn runs), how many runs wait
 * behind it, the active run and the transcript locator.
 *
 * @throws `SESSION_NOT_FOUND`
 */
export async function sessionStatus(
  ctx: RuntimeContext,
  params: unknown,
): Promise<GatewayResult<'session.status'>> {
  const p = readParams('session.status', params);
  p.only(['key']);
  const session = await requireSession(ctx.store, ctx.config, p.string('key'));
  const running = ctx.queue.runningBatch(session.key);
  const status: SessionStatus = running ? 'running' : (session.status ?? 'idle');
  const locator = ctx.store.transcriptLocator(session);
  return {
    session,
    status,
    queueDepth: ctx.queue.pendingCount(session.key),
    ...(running?.[0] ? { activeRunId: running[0].id } : {}),
    ...(locator ? { transcriptLocator: locator } : {}),
  };
}
