import { Type } from '@sinclair/typebox';
import {
  keepsMessage,
  type SanitizedHistory,
  type SanitizedMessage,
  type SanitizeHistoryOptions,
  sanitizeHistory,
} from '../history/index.js';
import type { StoredMessage } from '../interfaces/records.js';
import { type AgentTool, toolResult } from '../interfaces/tool.js';
import { withoutHiddenSources } from './message-sources.js';
import { clampInt, dropNonFinite } from './sessions-list.js';
import {
  configuredSecrets,
  displayKey,
  failure,
  findAllowedTarget,
  gatewayFailure,
  type ToolScope,
} from './tool-context.js';
import { validateToolArgs } from './validate-args.js';

/** Messages sessions_history returns when `limit` is not given. */
export const SESSIONS_HISTORY_DEFAULT_LIMIT = 50;
/** The most messages sessions_history returns. */
export const SESSIONS_HISTORY_MAX_LIMIT = 500;

export const SessionsHistoryParams = Type.Object(
  {
    sessionKey: Type.String({
      minLength: 1,
      maxLength: 512,
      description: 'A session key or sessionId from sessions_list.',
    }),
    limit: Type.Optional(
      Type.Number({
        minimum: 1,
        description: `Most messages (default ${SESSIONS_HISTORY_DEFAULT_LIMIT}, at most ${SESSIONS_HISTORY_MAX_LIMIT}).`,
      }),
    ),
    offset: Type.Optional(
      Type.Number({
        minimum: 0,
        description:
          'Skip this many of the newest messages (default 0); pass nextOffset to read further back.',
      }),
    ),
    includeTools: Type.Optional(Type.Boolean({ description: 'Include tool results (default false).' })),
  },
  { additionalProperties: false },
);

/**
 * The result of sessions_history. `hasMore` says older messages exist before this page;
 * `nextOffset` (present when `hasMore`) is the `offset` that reads them, also when the 80 KiB cap
 * dropped older messages of this page.
 */
export interface SessionsHistoryResult {
  /** The session key in display form. */
  sessionKey: string;
  /** The page of messages, oldest first, sanitised. */
  messages: SanitizedMessage[];
  /** True when any text was cut to the per-text limit. */
  truncated: boolean;
  /** True when any secret was redacted. */
  redacted: boolean;
  /** True when older messages were dropped to fit the 80 KiB cap. */
  hardCapped: boolean;
  /** UTF-8 bytes of the JSON of `messages`. */
  totalBytes: number;
  /** True when older messages exist before this page. */
  hasMore: boolean;
  /** The `offset` that reads the older messages (present when `hasMore`). */
  nextOffset?: number;
}

/** Creates the `sessions_history` tool for one requester. */
export function createSessionsHistoryTool(scope: ToolScope): AgentTool<typeof SessionsHistoryParams> {
  return {
    name: 'sessions_history',
    description:
      'Read the recent transcript of a session you can see (by key or sessionId). Secrets are redacted, long ' +
      'texts cut, images omitted; tool results only with includeTools.',
    parameters: SessionsHistoryParams,
    async execute(_toolCallId, rawArgs) {
      const args = validateToolArgs(
        'sessions_history',
        SessionsHistoryParams,
        dropNonFinite(rawArgs, ['limit', 'offset']),
      );
      if (!args.ok) return failure('error', args.error);
      const target = await findAllowedTarget(scope, args.value.sessionKey, 'history');
      if (!target.ok) return failure(target.failure.status, target.failure.error);
      const limit = clampInt(args.value.limit, SESSIONS_HISTORY_DEFAULT_LIMIT, 1, SESSIONS_HISTORY_MAX_LIMIT);
      const offset = clampInt(args.value.offset, 0, 0, Number.MAX_SAFE_INTEGER);
      try {
        const { messages, total } = await scope.options.gateway.call('chat.history', {
          key: target.session.key,
          limit,
          ...(offset > 0 ? { offset } : {}),
        });
        const page = pageOfHistory(
          await withoutHiddenSources(scope, messages),
          { offset, total },
          {
            includeTools: args.value.includeTools ?? false,
            secrets: configuredSecrets(scope.options.config),
          },
        );
        const result: SessionsHistoryResult = { sessionKey: displayKey(scope, target.session.key), ...page };
        return toolResult(result);
      } catch (error) {
        const f = gatewayFailure(error, 'Reading the history failed.');
        return failure(f.status, f.error);
      }
    },
  };
}

/**
 * One page of sessions_history from the messages read for it: sanitised and capped as
 * `sanitizeHistory` does, with `hasMore` and the `nextOffset` that reads on from the oldest message
 * this page did not account for. Paging from offset 0 by `nextOffset` shows every kept message exactly
 * once (the too-large placeholder stands for the one message it replaces).
 *
 * @param fetched - the messages read for the page, oldest first: the newest `limit` before `offset`
 * @param position - the page's `offset` (messages skipped back from the newest) and the transcript's `total`
 * @param options - as `sanitizeHistory`
 * @returns the page, without its session key
 */
export function pageOfHistory(
  fetched: readonly StoredMessage[],
  position: { offset: number; total: number },
  options: SanitizeHistoryOptions,
): Omit<SessionsHistoryResult, 'sessionKey'> {
  const sanitized = sanitizeHistory(fetched, options);
  const nextOffset = position.offset + coveredCount(fetched, sanitized, options.includeTools);
  const hasMore = nextOffset < position.total;
  return { ...sanitized, hasMore, ...(hasMore ? { nextOffset } : {}) };
}

/**
 * How many of the fetched messages (oldest first) a page accounts for, counted from the newest: all
 * of them, unless the size cap kept only the newest kept ones (`keepsMessage`), in which case the
 * page reaches back to the oldest message it shows, and paging resumes just before it. The too-large
 * placeholder shows the newest kept message and nothing older.
 */
function coveredCount(
  fetched: readonly StoredMessage[],
  page: SanitizedHistory,
  includeTools: boolean | undefined,
): number {
  if (!page.hardCapped) return fetched.length;
  let unaccounted = page.messages.length;
  let index = fetched.length;
  while (unaccounted > 0 && index > 0) {
    index -= 1;
    if (keepsMessage(fetched[index]!, includeTools)) unaccounted -= 1;
  }
  return fetched.length - index;
}
