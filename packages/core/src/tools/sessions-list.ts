import { Type } from '@sinclair/typebox';
import { type SanitizedMessage, sanitizeHistory } from '../history/index.js';
import type { SessionsListParams as GatewayListParams } from '../interfaces/gateway.js';
import type { SessionKind, SessionRecord } from '../interfaces/records.js';
import { type AgentTool, toolResult } from '../interfaces/tool.js';
import { deriveChannelField, isReservedSessionKey } from '../keys/index.js';
import { mapWithConcurrency } from './concurrency.js';
import { jsonBytes, largestFitting } from './fit-json.js';
import { configuredSecrets, displayKey, failure, gatewayFailure, type ToolScope } from './tool-context.js';
import { validateToolArgs } from './validate-args.js';
import {
  countWiderScope,
  forkLineages,
  hiddenCount,
  hiddenReason,
  knownKinds,
  mayAccess,
  mayShow,
  visibleScope,
} from './visible-scope.js';

/** The most rows sessions_list returns, whatever `limit` asks for. */
export const SESSIONS_LIST_MAX_LIMIT = 200;
/** The most messages per row sessions_list includes. */
export const SESSIONS_LIST_MAX_MESSAGES = 20;
/** History fetches in flight at once for `messageLimit`. */
export const SESSIONS_LIST_HISTORY_CONCURRENCY = 4;

/** The most UTF-8 bytes of sessions_list's result JSON (64 KiB); rows are dropped from the end to fit. */
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
  /** The last `messageLimit` messages, sanitised and without tool results (only when `messageLimit > 0`). */
  messages?: SanitizedMessage[];
}

/**
 * The result of sessions_list. `nextOffset` is present when more rows match; `truncated` when
 * rows were dropped to fit `SESSIONS_LIST_MAX_BYTES`; `filtered` says how many sessions
 * visibility hid, and why.
 */
export interface SessionsListResult {
  /** How many rows `sessions` holds. */
  count: number;
  /** The visible sessions, newest `updatedAt` first. */
  sessions: SessionListRow[];
  /** The `offset` of the next page, when more rows match. */
  nextOffset?: number;
  /** Present when rows were dropped to fit the size cap. */
  truncated?: true;
  /** Why rows were dropped, for the model. */
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
  const [page, wider] = await Promise.all([
    gateway.call('sessions.list', { ...filter, ...visible.filter, limit, ...(offset > 0 ? { offset } : {}) }),
    countWiderScope(
      visible,
      async (scoped) => (await gateway.call('sessions.list', { ...filter, ...scoped, limit: 1 })).total,
    ),
  ]);

  // Each shown row remembers its position in the page, so paging resumes after the last one shown.
  const lineages = await forkLineages(scope, visible, page.sessions);
  const positions: number[] = [];
  let refused = 0;
  const allowed = page.sessions.filter((session, position) => {
    const shown = mayShow(scope, visible, session.key, 'list', lineages.get(session.key));
    if (shown) positions.push(position);
    else if (!isReservedSessionKey(session.key)) refused++;
    return shown;
  });

  const children = visible.tree ?? (await childrenOf(scope, allowed));
  const rows = allowed.map((session) => toRow(scope, session, children, page.transcriptLocators));
  if (messageLimit > 0) {
    const secrets = configuredSecrets(config);
    await mapWithConcurrency(rows, SESSIONS_LIST_HISTORY_CONCURRENCY, async (row, i) => {
      const { messages } = await gateway.call('chat.history', { key: allowed[i]!.key, limit: messageLimit });
      row.messages = sanitizeHistory(messages, { includeTools: false, secrets }).messages;
    });
  }

  const hidden = hiddenCount(wider, { total: page.total, refused });
  const filtered =
    hidden > 0 ? { filtered: { hidden, reason: hiddenReason(visible.visibility, sandboxed) } } : {};
  const build = (kept: number): SessionsListResult => {
    const consumed = kept === rows.length ? page.sessions.length : positions[kept]!;
    const nextOffset = offset + consumed;
    return {
      count: kept,
      sessions: rows.slice(0, kept),
      ...(nextOffset < page.total ? { nextOffset } : {}),
      ...(kept < rows.length
        ? {
            truncated: true,
            truncationReason: `The rows did not fit in ${SESSIONS_LIST_MAX_BYTES / 1024} KiB of JSON; call again with offset ${nextOffset} (or a lower messageLimit) for the rest.`,
          }
        : {}),
      ...filtered,
    };
  };
  return build(largestFitting(rows.length, (kept) => jsonBytes(build(kept)) <= SESSIONS_LIST_MAX_BYTES));
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
  sessions: readonly SessionRecord[],
): Promise<Map<string, string[]>> {
  const result = new Map<string, string[]>();
  const parents = sessions.filter((s) => s.kind !== 'cron' && s.kind !== 'hook' && s.kind !== 'node');
  await mapWithConcurrency(parents, SESSIONS_LIST_HISTORY_CONCURRENCY, async (session) => {
    const { sessions: kids } = await scope.options.gateway.call('sessions.list', {
      spawnedBy: session.key,
      limit: 50,
    });
    // A visible session may have spawned under an agent the caller may not see: never name those.
    // A forked kid holds the history of `session`, which the caller sees: no further lineage to check.
    const shown = kids
      .map((k) => k.key)
      .filter((key) => mayAccess(scope, key, { ancestors: [session.key], inheritsFrom: 0 }, 'list'));
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
