import { ColloquyError, isColloquyError, normalizeSessionKey, type SessionRecord } from '@colloquy/core';
import type { GatewayResult, RunSummary, SessionKind } from '@colloquy/core/gateway';
import { batchReads, type RunRecord, SESSION_KINDS, type SessionListQuery } from '@colloquy/core/store';
import type { RuntimeContext } from '../runtime/runtime-context.js';
import { fireDueWatchesLater } from '../runtime/watch-notices.js';
import { abortSessionRuns } from './abort-runs.js';
import { type ParamReader, readParams } from './params.js';
import { validateSessionPatch } from './patch-session.js';
import { requireSession, requireSessionByLabel } from './resolve-session.js';

/**
 * The `kinds` param of a method, checked against the known kinds.
 *
 * @throws `INVALID_ARGUMENT` naming an unknown kind and the known ones
 */
export function readKinds(p: ParamReader, method: string): SessionKind[] | undefined {
  const kinds = p.optionalStrings('kinds');
  for (const kind of kinds ?? []) {
    if (!SESSION_KINDS.includes(kind as SessionKind)) {
      throw new ColloquyError(
        'INVALID_ARGUMENT',
        `${method}: unknown kind "${kind}". Kinds: ${SESSION_KINDS.join(', ')}.`,
        { kind },
      );
    }
  }
  return kinds as SessionKind[] | undefined;
}

/** The latest run of each session that has one (for `withLatestRun`), read in one batch. */
async function latestRunsOf(
  ctx: RuntimeContext,
  sessions: readonly SessionRecord[],
): Promise<Record<string, RunSummary>> {
  const out: Record<string, RunSummary> = {};
  if (sessions.length === 0) return out;
  const latest = await batchReads(ctx.store).listRunsOfSessions(
    sessions.map((session) => session.key),
    1,
  );
  for (const [index, session] of sessions.entries()) {
    const run = latest[index]?.[0];
    if (!run) continue;
    out[session.key] = toRunSummary(run);
  }
  return out;
}

/**
 * What listings show of a run: its state, times, tokens, cost and error.
 *
 * @param run - the run record
 * @returns its summary
 */
export function toRunSummary(run: RunRecord): RunSummary {
  return {
    runId: run.runId,
    status: run.status,
    lane: run.lane,
    createdAt: run.createdAt,
    ...(run.startedAt !== undefined ? { startedAt: run.startedAt } : {}),
    ...(run.endedAt !== undefined ? { endedAt: run.endedAt } : {}),
    ...(run.usage ? { usage: run.usage } : {}),
    ...(run.costUsd !== undefined ? { costUsd: run.costUsd } : {}),
    ...(run.error !== undefined ? { error: run.error } : {}),
  };
}

/**
 * `sessions.list`: sessions newest first, filters pushed into the store query, and how many
 * matched before `limit`. Visibility is the caller's business (the session tools apply it).
 *
 * @throws `INVALID_ARGUMENT` for an unknown kind or a bad number
 */
export async function sessionsList(
  ctx: RuntimeContext,
  params: unknown,
): Promise<GatewayResult<'sessions.list'>> {
  const p = readParams('sessions.list', params);
  p.only([
    'kinds',
    'activeMinutes',
    'spawnedBy',
    'agentIds',
    'keys',
    'alsoKeys',
    'onlyForked',
    'includeArchived',
    'limit',
    'offset',
    'withLatestRun',
  ]);
  const kinds = readKinds(p, 'sessions.list');
  const activeMinutes = p.optionalNumber('activeMinutes', 0);
  const limit = p.optionalNumber('limit', 1);
  const offset = Math.floor(p.optionalNumber('offset', 0) ?? 0);
  const spawnedBy = p.optionalStringOrStrings('spawnedBy');
  const agentIds = p.optionalStrings('agentIds');
  const keys = p.optionalStrings('keys');
  const alsoKeys = p.optionalStrings('alsoKeys');
  const includeArchived = p.optionalBoolean('includeArchived');
  const query: SessionListQuery = { now: ctx.clock.now() };
  if (kinds && kinds.length > 0) query.kinds = kinds;
  if (activeMinutes !== undefined) query.activeMinutes = activeMinutes;
  if (typeof spawnedBy === 'string') query.spawnedBy = normalizeSessionKey(spawnedBy);
  else if (spawnedBy) query.spawnedBy = spawnedBy.map(normalizeSessionKey);
  if (agentIds) query.agentIds = agentIds.map((id) => id.trim().toLowerCase());
  if (keys) query.keys = keys.map(normalizeSessionKey);
  if (alsoKeys) query.alsoKeys = alsoKeys.map(normalizeSessionKey);
  if (includeArchived) query.includeArchived = true;
  if (p.optionalBoolean('onlyForked')) query.onlyForked = true;
  const sessions = await ctx.store.listSessions({
    ...query,
    ...(limit === undefined ? {} : { limit: Math.floor(limit) }),
    ...(offset > 0 ? { offset } : {}),
  });
  const total = limit === undefined && offset === 0 ? sessions.length : await ctx.store.countSessions(query);
  const transcriptLocators: Record<string, string> = {};
  for (const session of sessions) {
    const locator = ctx.store.transcriptLocator(session);
    if (locator) transcriptLocators[session.key] = locator;
  }
  if (!p.optionalBoolean('withLatestRun')) return { sessions, total, transcriptLocators };
  return { sessions, total, transcriptLocators, latestRuns: await latestRunsOf(ctx, sessions) };
}

/**
 * `sessions.resolve`: exactly one of `key` (any spelling or alias; a sessionId is accepted too),
 * `sessionId`, or `label` (scoped by `agentId`).
 *
 * @throws `SESSION_NOT_FOUND` (with how to find valid keys), `CONFLICT` for an ambiguous label,
 *   `INVALID_ARGUMENT` when not exactly one selector is given
 */
export async function sessionsResolve(
  ctx: RuntimeContext,
  params: unknown,
): Promise<GatewayResult<'sessions.resolve'>> {
  const p = readParams('sessions.resolve', params);
  p.only(['key', 'sessionId', 'label', 'agentId']);
  const key = p.optionalString('key');
  const sessionId = p.optionalString('sessionId');
  const label = p.optionalString('label');
  const agentId = p.optionalString('agentId');
  const given = [key, sessionId, label].filter((v) => v !== undefined).length;
  if (given !== 1) {
    throw new ColloquyError(
      'INVALID_ARGUMENT',
      'sessions.resolve: pass exactly one of "key", "sessionId" or "label" (with "agentId" to scope a label).',
    );
  }
  if (key !== undefined) return { session: await requireSession(ctx.store, ctx.config, key, agentId) };
  if (sessionId !== undefined) {
    const [session] = await ctx.store.listSessions({ sessionId, includeArchived: true });
    if (!session) {
      throw new ColloquyError(
        'SESSION_NOT_FOUND',
        `No session with sessionId "${sessionId}". Call sessions.list to see sessionIds.`,
        { sessionId },
      );
    }
    return { session };
  }
  return { session: await requireSessionByLabel(ctx.store, label!, agentId?.toLowerCase()) };
}

/**
 * `sessions.patch`: validated changes to label, displayName, model, thinking/verbose levels and the
 * send-policy override (see `validateSessionPatch`).
 *
 * @throws `SESSION_NOT_FOUND`, `INVALID_ARGUMENT`, `CONFLICT`
 */
export async function sessionsPatch(
  ctx: RuntimeContext,
  params: unknown,
): Promise<GatewayResult<'sessions.patch'>> {
  const p = readParams('sessions.patch', params);
  p.only(['key', 'patch']);
  const current = await requireSession(ctx.store, ctx.config, p.string('key'));
  const patch = await validateSessionPatch(ctx, current, p.optionalObject('patch') ?? {});
  const session = await ctx.store.patchSession(current.key, { ...patch, updatedAt: ctx.clock.now() });
  ctx.events.emit({ type: 'session.updated', sessionKey: session.key });
  fireDueWatchesLater(ctx, session.key);
  return { session };
}

/**
 * `sessions.delete`: stops the session's queued and running runs and ends its yield (`killed`),
 * then deletes the session with its transcript, inbox and thread bindings. Runs and outbox rows
 * are kept.
 *
 * @returns `{ deleted: false }` when the session does not exist
 */
export async function sessionsDelete(
  ctx: RuntimeContext,
  params: unknown,
): Promise<GatewayResult<'sessions.delete'>> {
  const p = readParams('sessions.delete', params);
  p.only(['key']);
  const raw = p.string('key');
  let key: string;
  try {
    key = (await requireSession(ctx.store, ctx.config, raw)).key;
  } catch (error) {
    if (isColloquyError(error) && error.code === 'SESSION_NOT_FOUND') return { deleted: false };
    throw error;
  }
  await abortSessionRuns(ctx, key, 'The session was deleted.');
  const deleted = await ctx.store.deleteSession(key);
  ctx.history.forget(key);
  if (deleted) ctx.events.emit({ type: 'session.deleted', sessionKey: key });
  return { deleted };
}
