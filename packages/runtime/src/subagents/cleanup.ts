import type { SessionRecord } from '@colloquy/core';
import { agentConfigFor, subagentMetaOf } from '@colloquy/core/internal';
import { TERMINAL_RUN_STATUSES } from '@colloquy/core/store';
import type { RuntimeContext } from '../runtime/runtime-context.js';
import { removeAttachments } from './attachment-files.js';
import type { SweepReport } from './subagent-registry.js';
import { sessionWorkspaceDir } from './workspace.js';

/** What cleanup needs from the registry. */
export interface CleanupDeps {
  workspaceRoot: string;
  /** True while the session has a queued or running turn. */
  isBusy(sessionKey: string): Promise<boolean>;
  /** Writes the outbox row of an ended run that has none; returns true when written. */
  reconcile(runId: string): Promise<boolean>;
}

/**
 * After a child's announce is finished (delivered, parked or skipped): `cleanup: "delete"`
 * children are deleted through `sessions.delete` (transcript, inbox, bindings; runs and outbox rows
 * stay), kept children lose their attachments unless `retainOnSessionKeep`. A child that has new
 * work queued is left alone.
 *
 * @param ctx - the runtime internals
 * @param deps - workspace root and busy check
 * @param childKey - the child session
 * @returns what was done: `deleted`, `attachments-removed` or `kept`
 */
export async function finishChild(
  ctx: RuntimeContext,
  deps: CleanupDeps,
  childKey: string,
): Promise<'deleted' | 'attachments-removed' | 'kept'> {
  const child = await ctx.store.getSession(childKey);
  const meta = child ? subagentMetaOf(child) : undefined;
  if (!child || !meta || (await deps.isBusy(childKey))) return 'kept';
  if (meta.cleanup === 'delete') {
    const { deleted } = await ctx.gateway.call('sessions.delete', { key: childKey });
    return deleted ? 'deleted' : 'kept';
  }
  if (meta.attachments && !ctx.config.tools.sessions_spawn.attachments.retainOnSessionKeep) {
    await removeAttachments(sessionWorkspaceDir(deps.workspaceRoot, childKey), meta.attachments.id);
    return 'attachments-removed';
  }
  return 'kept';
}

/**
 * The periodic sub-agent sweep:
 * - an ended run of a sub-agent without an outbox row gets one (its result is never lost);
 * - `cleanup: "delete"` children whose announce is done are deleted;
 * - kept children idle for `agents.defaults.subagents.archiveAfterMinutes` (0 = never) are archived
 *   (and lose their attachments unless `retainOnSessionKeep`).
 *
 * @param ctx - the runtime internals
 * @param deps - workspace root, busy check and reconciliation
 * @param now - epoch ms
 * @returns what was done
 */
export async function sweepSubagents(
  ctx: RuntimeContext,
  deps: CleanupDeps,
  now: number,
): Promise<SweepReport> {
  const { store, config } = ctx;
  const report: SweepReport = { archived: [], deleted: [], reconciled: [] };
  for (const child of await store.listSessions({ kinds: ['subagent'] })) {
    if (await deps.isBusy(child.key)) continue;
    const [latest] = await store.listRuns({ sessionKey: child.key, limit: 1 });
    if (latest && !TERMINAL_RUN_STATUSES.includes(latest.status)) continue;
    if (latest && (await deps.reconcile(latest.runId))) {
      report.reconciled.push(latest.runId);
      continue;
    }
    const row = latest ? await store.getOutbox(child.key, latest.runId) : undefined;
    if (row?.status === 'pending') continue;
    const meta = subagentMetaOf(child);
    if (meta?.cleanup === 'delete') {
      if ((await finishChild(ctx, deps, child.key)) === 'deleted') report.deleted.push(child.key);
      continue;
    }
    if (archiveDue(ctx, child, latest?.endedAt, now)) {
      await store.patchSession(child.key, { archivedAt: now });
      ctx.events.emit({ type: 'session.updated', sessionKey: child.key });
      if (meta?.attachments && !config.tools.sessions_spawn.attachments.retainOnSessionKeep) {
        await removeAttachments(sessionWorkspaceDir(deps.workspaceRoot, child.key), meta.attachments.id);
      }
      report.archived.push(child.key);
    }
  }
  return report;
}

function archiveDue(
  ctx: RuntimeContext,
  child: SessionRecord,
  endedAt: number | undefined,
  now: number,
): boolean {
  const minutes = agentConfigFor(ctx.config, child.agentId).subagents.archiveAfterMinutes;
  if (minutes <= 0) return false;
  const since = endedAt ?? child.endedAt ?? child.updatedAt;
  return now - since >= minutes * 60_000;
}
