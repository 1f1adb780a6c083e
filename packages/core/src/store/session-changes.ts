import {
  type RunStatus,
  SESSION_CHANGE_KINDS,
  type SessionChangeKind,
  type SessionRecord,
  TERMINAL_RUN_STATUSES,
} from '../interfaces/records.js';
import type { SessionChanges } from '../interfaces/store.js';

/**
 * How many of a session's newest versions `readChanges` counts. Stores log one row per `status`
 * or `patch` change (messages need none, see {@link summarizeChanges}) and prune rows older than
 * the window, so the log is bounded per session: a version further back is counted from the
 * window's start and the answer says `truncated`. A store may keep a few older rows between
 * prunes; answers never depend on that.
 */
export const SESSION_CHANGE_WINDOW = 512;

/**
 * The session fields that only mirror runs and turns (status, times, usage, cost, runtime
 * metadata such as a yield): a write that touches only these is not a `patch` change, because
 * the run's `status` changes and the turn's `message` changes already count it.
 */
export const SESSION_BOOKKEEPING_FIELDS: readonly (keyof SessionRecord)[] = [
  'updatedAt',
  'status',
  'startedAt',
  'endedAt',
  'usage',
  'estimatedCostUsd',
  'systemSent',
  'abortedLastRun',
  'meta',
  'stateVersion',
];

const BOOKKEEPING = new Set<string>(SESSION_BOOKKEEPING_FIELDS);

/**
 * Whether writing `next` over `previous` is a `patch` change: some field outside
 * {@link SESSION_BOOKKEEPING_FIELDS} differs (as JSON values; key order does not matter).
 *
 * @param previous - the stored record, or undefined for a new session (never a change)
 * @param next - the record written
 * @param fields - the fields that may differ, when the caller knows them (a patch's keys: the fields
 *   it does not name are unchanged, so a patch of bookkeeping alone is never compared); default every
 *   field of both records
 */
export function isPatchChange(
  previous: SessionRecord | undefined,
  next: SessionRecord,
  fields?: readonly string[],
): boolean {
  if (previous === undefined) return false;
  const compared = fields ?? new Set([...Object.keys(previous), ...Object.keys(next)]);
  for (const field of compared) {
    if (BOOKKEEPING.has(field)) continue;
    const a = (previous as unknown as Record<string, unknown>)[field];
    const b = (next as unknown as Record<string, unknown>)[field];
    if (!sameJson(a, b)) return true;
  }
  return false;
}

/**
 * Whether a run going from `previous` to `next` is a `status` change of its session: it started
 * (became `running`) or ended (a terminal status). Queueing and re-queueing are not changes.
 *
 * @param previous - the run's status before, or undefined for a new run
 * @param next - its status after
 */
export function isStatusChange(previous: RunStatus | undefined, next: RunStatus): boolean {
  if (previous === next) return false;
  return next === 'running' || TERMINAL_RUN_STATUSES.includes(next);
}

/**
 * Folds a session's logged changes into {@link SessionChanges}: the window logic every Store
 * shares. Stores log only `status` and `patch` changes (one row each, with its version); every
 * other version is a `message`, so messages are counted as the versions in the range that no row
 * claims. An append, the hot path, then writes no log row at all.
 *
 * @param sinceVersion - the version asked for (floored, at least 0)
 * @param toVersion - the session's current `stateVersion`
 * @param logged - `[kind, count]` of the logged (`status`, `patch`) changes with a version above
 *   `changeWindowStart(sinceVersion, toVersion)`; a kind may repeat (its counts add up)
 */
export function summarizeChanges(
  sinceVersion: number,
  toVersion: number,
  logged: Iterable<readonly [SessionChangeKind, number]>,
): SessionChanges {
  const fromVersion = changeWindowStart(sinceVersion, toVersion);
  const changes = Object.fromEntries(SESSION_CHANGE_KINDS.map((kind) => [kind, 0])) as Record<
    SessionChangeKind,
    number
  >;
  for (const [kind, count] of logged) {
    if (kind !== 'message' && kind in changes) changes[kind] += Number(count);
  }
  changes.message = Math.max(0, toVersion - fromVersion - changes.status - changes.patch);
  return { fromVersion, toVersion, changes, truncated: fromVersion > Math.max(0, Math.floor(sinceVersion)) };
}

/**
 * The version counting starts after: `sinceVersion` clamped to the kept window
 * `[toVersion - SESSION_CHANGE_WINDOW, toVersion]`.
 */
export function changeWindowStart(sinceVersion: number, toVersion: number): number {
  const since = Math.max(0, Math.floor(sinceVersion));
  return Math.min(toVersion, Math.max(since, toVersion - SESSION_CHANGE_WINDOW));
}

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const kb = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}
