import { Type } from '@sinclair/typebox';
import { defaultAgentId } from '../config/index.js';
import { keepsMessage, type SanitizedMessage, sanitizeHistory } from '../history/index.js';
import type { SessionsListParams as GatewayListParams } from '../interfaces/gateway.js';
import type { SessionKind, SessionRecord } from '../interfaces/records.js';
import { type AgentTool, toolResult } from '../interfaces/tool.js';
import { deriveChannelField, isReservedSessionKey } from '../keys/index.js';
import { mapWithConcurrency } from './concurrency.js';
import { arrayJsonBytes, jsonBytes } from './fit-json.js';
import { type FittedRows, fitRows } from './fit-rows.js';
import { withoutHiddenSources } from './message-sources.js';
import { configuredSecrets, displayKey, failure, gatewayFailure, type ToolScope } from './tool-context.js';
import { validateToolArgs } from './validate-args.js';
import {
  ancestorsInTree,
  countWiderScope,
  forkLineages,
  hiddenCount,
  hiddenReason,
  isTreeScoped,
  knownKinds,
  mayAccess,
  mayShow,
  refusedForks,
  type VisibleScope,
  visibleScope,
} from './visible-scope.js';

/** The most rows sessions_list returns, whatever `limit` asks for. */
export const SESSIONS_LIST_MAX_LIMIT = 200;
/** The most messages per row sessions_list includes. */
export const SESSIONS_LIST_MAX_MESSAGES = 20;
/** History fetches in flight at once for `messageLimit`. */
export const SESSIONS_LIST_HISTORY_CONCURRENCY = 4;

/**
 * The most UTF-8 bytes of sessions_list's result JSON (64 KiB). To fit, a row's oldest messages are
 * left out, and rows are dropped from the end (a row is always shown, if only without messages).
 */
export const SESSIONS_LIST_MAX_BYTES = 64 * 1024;

export const SessionsListParams = Type.Object(
  {
    kinds: Type.Optional(
      Type.Array(Type.String({ maxLength: 32 }), {
        maxItems: 16,
        description: 'Only these kinds: main, dm, group, cron, hook, node, subagent, other.',
      }),
    ),
    limit: Type.Optional(
      Type.Number({
        minimum: 1,
        description: `Most rows to return (default and maximum ${SESSIONS_LIST_MAX_LIMIT}).`,
      }),
    ),
    offset: Type.Optional(
      Type.Number({
        minimum: 0,
        description: 'Skip this many rows (default 0); pass nextOffset to page on.',
      }),
    ),
    activeMinutes: Type.Optional(
      Type.Number({ minimum: 1, description: 'Only sessions active within this many minutes.' }),
    ),
    messageLimit: Type.Optional(
      Type.Number({
        minimum: 0,
        description: `Include the last N messages of each session (0 = none, at most ${SESSIONS_LIST_MAX_MESSAGES}).`,
      }),
    ),
  },
  { additionalProperties: false },
);

/** One row of sessions_list. */
export interface SessionListRow {
  /** The session key in display form (relative to the requester where possible). */
  key: string;
  /** The session kind. */
  kind: SessionKind;
  /** A channel id, `internal` (cron, hook, node sessions) or `unknown`. */
  channel: string;
  /** The session's label. */
  label?: string;
  /** A human name for listings. */
  displayName?: string;
  /** Where the session's replies go. */
  deliveryContext?: SessionRecord['deliveryContext'];
  /** Epoch milliseconds of the last activity. */
  updatedAt: number;
  /** The session's stable opaque id. */
  sessionId: string;
  /** The session's model override (`provider/model`); absent means the agent's model. */
  model?: string;
  /** The size of the last prompt sent to the model, in tokens. */
  contextTokens?: number;
  /** Tokens used over the session's runs. */
  totalTokens?: number;
  /** Accumulated model cost in US dollars, when priced. */
  estimatedCostUsd?: number;
  /** The state of the session's latest run. */
  status?: SessionRecord['status'];
  /** Epoch milliseconds the latest run started. */
  startedAt?: number;
  /** Epoch milliseconds the latest run ended. */
  endedAt?: number;
  /** Milliseconds from `startedAt` to `endedAt` (or to now while running). */
  runtimeMs?: number;
  /** Display keys of the sessions it spawned; absent when none. */
  childSessions?: string[];
  /** The session's thinking level override. */
  thinkingLevel?: string;
  /** The session's verbosity override. */
  verboseLevel?: string;
  /** True once a run of the session has completed. */
  systemSent?: boolean;
  /** True when the last run ended `killed` or `timeout`. */
  abortedLastRun?: boolean;
  /** The session's own send-policy override; absent means it inherits the rules. */
  sendPolicy?: SessionRecord['sendPolicy'];
  /** Channel plugin id of the last inbound message. */
  lastChannel?: string;
  /** The platform chat id of the last inbound message. */
  lastTo?: string;
  /** The bot account of the last inbound message. */
  lastAccountId?: string;
  /** A best-effort locator of the transcript (see `Store.transcriptLocator`). */
  transcriptPath?: string;
  /**
   * The last `messageLimit` messages, oldest first, sanitised and without tool results (only when
   * `messageLimit > 0`). Fewer when the oldest of them were left out to fit: see `messagesTrimmed`.
   */
  messages?: SanitizedMessage[];
  /**
   * How many of the oldest of the last `messageLimit` messages (tool results aside) were left out of
   * `messages` to keep within the size caps: 64 KiB for the whole result, 80 KiB for one session's
   * messages. Absent when none were. Read them with sessions_history.
   */
  messagesTrimmed?: number;
}

/**
 * The result of sessions_list. `nextOffset` is present when more rows match; `truncated` when
 * something was left out to fit `SESSIONS_LIST_MAX_BYTES` (rows' oldest messages, see
 * `SessionListRow.messagesTrimmed`, or rows for the next page); `filtered` says how many sessions
 * visibility hid, and why. A page shows at least one row whenever rows remain, so following
 * `nextOffset` always moves forward.
 */
export interface SessionsListResult {
  /** How many rows `sessions` holds. */
  count: number;
  /** The visible sessions, newest `updatedAt` first. */
  sessions: SessionListRow[];
  /** The `offset` of the next page, when more rows match. */
  nextOffset?: number;
  /** Present when rows, or the oldest messages of rows (`messagesTrimmed`), were left out to fit the size cap. */
  truncated?: true;
  /** What was left out to fit, and how to read it, for the model. */
  truncationReason?: string;
  /** How many sessions visibility hid, and why. */
  filtered?: { hidden: number; reason: string };
}

/** Creates the `sessions_list` tool for one requester. */
export function createSessionsListTool(scope: ToolScope): AgentTool<typeof SessionsListParams> {
  return {
    name: 'sessions_list',
    description:
      'List the sessions (conversations) you can see, newest first, with kind, channel, model, tokens and status. ' +
      'Optionally include each session’s last messages. Pages with offset / nextOffset.',
    parameters: SessionsListParams,
    async execute(_toolCallId, rawArgs) {
      const args = validateToolArgs(
        'sessions_list',
        SessionsListParams,
        dropNonFinite(rawArgs, ['limit', 'offset', 'activeMinutes', 'messageLimit']),
      );
      if (!args.ok) return failure('error', args.error);
      try {
        return toolResult(await listSessions(scope, args.value));
      } catch (error) {
        const f = gatewayFailure(error, 'Listing sessions failed.');
        return failure(f.status, f.error);
      }
    },
  };
}

async function listSessions(
  scope: ToolScope,
  args: { kinds?: string[]; limit?: number; offset?: number; activeMinutes?: number; messageLimit?: number },
): Promise<SessionsListResult> {
  const { gateway, config, sandboxed = false } = scope.options;
  const limit = clampInt(args.limit, SESSIONS_LIST_MAX_LIMIT, 1, SESSIONS_LIST_MAX_LIMIT);
  const offset = clampInt(args.offset, 0, 0, Number.MAX_SAFE_INTEGER);
  const messageLimit = clampInt(args.messageLimit, 0, 0, SESSIONS_LIST_MAX_MESSAGES);
  const activeMinutes = finiteFloor(args.activeMinutes);
  const kinds = knownKinds(args.kinds);
  const filter: GatewayListParams = {
    ...(kinds.length > 0 ? { kinds } : {}),
    ...(activeMinutes !== undefined ? { activeMinutes } : {}),
  };

  const visible = await visibleScope(scope);
  const [page, wider, forks] = await Promise.all([
    gateway.call('sessions.list', { ...filter, ...visible.filter, limit, ...(offset > 0 ? { offset } : {}) }),
    countWiderScope(
      visible,
      async (scoped) => (await gateway.call('sessions.list', { ...filter, ...scoped, limit: 1 })).total,
      defaultAgentId(config),
    ),
    refusedForks(scope, visible, filter),
  ]);
  const refusedFork = new Set(forks);

  // Each shown row remembers its position in the page, so paging resumes after the last one shown.
  const lineages = await forkLineages(scope, visible, page.sessions);
  const positions: number[] = [];
  let refused = 0;
  const allowed = page.sessions.filter((session, position) => {
    const shown = mayShow(scope, visible, session.key, 'list', lineages.get(session.key));
    if (shown) positions.push(position);
    else if (!isReservedSessionKey(session.key) && !refusedFork.has(session.key)) refused++;
    return shown;
  });

  const children =
    isTreeScoped(visible) && visible.tree ? visible.tree : await childrenOf(scope, visible, allowed);
  const rows = allowed.map((session) => toRow(scope, session, children, page.transcriptLocators));
  if (messageLimit > 0) {
    const secrets = configuredSecrets(config);
    await mapWithConcurrency(rows, SESSIONS_LIST_HISTORY_CONCURRENCY, async (row, i) => {
      const { messages } = await gateway.call('chat.history', { key: allowed[i]!.key, limit: messageLimit });
      const readable = await withoutHiddenSources(scope, messages);
      row.messages = sanitizeHistory(readable, { includeTools: false, secrets }).messages;
      // The 80 KiB cap of a history keeps its newest messages (the placeholder stands for one).
      const capped = messages.filter((m) => keepsMessage(m)).length - row.messages.length;
      if (capped > 0) row.messagesTrimmed = capped;
    });
  }

  const hidden = hiddenCount(wider, { total: page.total, refused: refused + forks.length });
  const filtered =
    hidden > 0 ? { filtered: { hidden, reason: hiddenReason(visible.visibility, sandboxed) } } : {};
  // Paging resumes at the page position of the first row not accounted for.
  const positionAfter = (consumed: number) =>
    consumed === rows.length ? page.sessions.length : positions[consumed]!;
  const build = (fit: FittedRows<SessionListRow>): SessionsListResult => {
    const nextOffset = offset + positionAfter(fit.consumed);
    const reason = truncationReason({
      trimmed: fit.rows.filter((row) => row.messagesTrimmed !== undefined).length,
      skipped: fit.skipped,
      ...(fit.consumed < rows.length ? { nextOffset } : {}),
    });
    return {
      count: fit.rows.length,
      sessions: fit.rows,
      ...(nextOffset < page.total ? { nextOffset } : {}),
      ...(reason !== undefined ? { truncated: true, truncationReason: reason } : {}),
      ...filtered,
    };
  };
  // The rows get what the rest of the result leaves at its largest: every field present, each
  // number at its most.
  const largestNextOffset = offset + page.sessions.length;
  const widest: SessionsListResult = {
    count: rows.length,
    sessions: [],
    nextOffset: largestNextOffset,
    truncated: true,
    truncationReason: truncationReason({
      trimmed: rows.length,
      skipped: rows.length,
      nextOffset: largestNextOffset,
    }),
    ...filtered,
  };
  // `sessions` sits one level deep in the result; its empty `[]` in `widest` makes way for the rows.
  const budget = SESSIONS_LIST_MAX_BYTES - (jsonBytes(widest) - arrayJsonBytes([], 1));
  return build(fitRows(rows, budget, 1));
}

/**
 * Says what was left out to fit the size cap, and how to read it; undefined when nothing was.
 *
 * @param left - rows shown without some of their oldest messages, rows skipped, and the offset of the
 *   rows left for the next page (when some were)
 */
function truncationReason(left: {
  trimmed: number;
  skipped: number;
  nextOffset?: number;
}): string | undefined {
  const parts: string[] = [];
  if (left.trimmed > 0) {
    parts.push(
      `the oldest messages of ${left.trimmed} session(s) were left out (see messagesTrimmed; sessions_history reads them)`,
    );
  }
  if (left.skipped > 0) {
    parts.push(`${left.skipped} session(s) too large to list even without messages were skipped`);
  }
  if (left.nextOffset !== undefined) {
    parts.push(
      `more rows did not fit: call again with offset ${left.nextOffset} (or a lower messageLimit) for the rest`,
    );
  }
  if (parts.length === 0) return undefined;
  return `The result is capped at ${SESSIONS_LIST_MAX_BYTES / 1024} KiB of JSON: ${parts.join('; ')}.`;
}

function toRow(
  scope: ToolScope,
  session: SessionRecord,
  children: ReadonlyMap<string, string | undefined> | Map<string, string[]>,
  locators: Record<string, string> | undefined,
): SessionListRow {
  const childKeys = childKeysOf(children, session.key).map((k) => displayKey(scope, k));
  const runtimeMs =
    session.startedAt !== undefined
      ? Math.max(0, (session.endedAt ?? scope.now()) - session.startedAt)
      : undefined;
  const row: SessionListRow = {
    key: displayKey(scope, session.key),
    kind: session.kind,
    channel: deriveChannelField(session),
    label: session.label,
    displayName: session.displayName,
    deliveryContext: session.deliveryContext,
    updatedAt: session.updatedAt,
    sessionId: session.sessionId,
    model: session.model,
    contextTokens: session.usage?.contextTokens,
    totalTokens: session.usage?.totalTokens,
    estimatedCostUsd: session.estimatedCostUsd,
    status: session.status,
    startedAt: session.startedAt,
    endedAt: session.endedAt,
    runtimeMs,
    childSessions: childKeys.length > 0 ? childKeys : undefined,
    thinkingLevel: session.thinkingLevel,
    verboseLevel: session.verboseLevel,
    systemSent: session.systemSent,
    abortedLastRun: session.abortedLastRun,
    sendPolicy: session.sendPolicy,
    lastChannel: session.lastChannel,
    lastTo: session.lastTo,
    lastAccountId: session.lastAccountId,
    transcriptPath: locators?.[session.key],
  };
  return withoutUndefined(row);
}

async function childrenOf(
  scope: ToolScope,
  visible: VisibleScope,
  sessions: readonly SessionRecord[],
): Promise<Map<string, string[]>> {
  const result = new Map<string, string[]>();
  await mapWithConcurrency(sessions, SESSIONS_LIST_HISTORY_CONCURRENCY, async (session) => {
    const { sessions: kids } = await scope.options.gateway.call('sessions.list', {
      spawnedBy: session.key,
      limit: 50,
    });
    // A visible session may have spawned under an agent the caller may not see: never name those,
    // unless the caller sees them as its own descendants (the tree holds the chain up to it).
    // A forked kid holds the history of `session`, which the caller sees: no further lineage to check.
    const above = visible.tree?.has(session.key) ? ancestorsInTree(visible.tree, session.key) : [];
    const lineage = { ancestors: [session.key, ...above], inheritsFrom: 0 };
    const shown = kids.map((k) => k.key).filter((key) => mayAccess(scope, key, lineage, 'list'));
    if (shown.length > 0) result.set(session.key, shown);
  });
  return result;
}

function childKeysOf(
  children: ReadonlyMap<string, string | undefined> | Map<string, string[]>,
  key: string,
): string[] {
  const direct = children.get(key);
  if (Array.isArray(direct)) return direct;
  const keys: string[] = [];
  for (const [child, parent] of children as ReadonlyMap<string, string | undefined>) {
    if (parent === key) keys.push(child);
  }
  return keys;
}

/** Removes numeric fields that are not finite (NaN, ±Infinity): the spec says they are ignored. */
export function dropNonFinite(args: unknown, fields: readonly string[]): unknown {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return args;
  const copy: Record<string, unknown> = { ...args };
  for (const field of fields) {
    const value = copy[field];
    if (typeof value === 'number' && !Number.isFinite(value)) delete copy[field];
  }
  return copy;
}

/** Floors a number, ignoring non-finite values; returns undefined when absent or non-finite. */
export function finiteFloor(value: number | undefined): number | undefined {
  return value !== undefined && Number.isFinite(value) ? Math.floor(value) : undefined;
}

/** Floors and clamps to [min, max], falling back to `fallback` when absent or non-finite. */
export function clampInt(value: number | undefined, fallback: number, min: number, max: number): number {
  const floored = finiteFloor(value);
  return floored === undefined ? fallback : Math.min(max, Math.max(min, floored));
}

function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
