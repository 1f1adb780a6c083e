import { Type } from '@sinclair/typebox';
import { defaultAgentId } from '../config/index.js';
import { createRedactor } from '../history/index.js';
import type { MessageRole, SessionKind } from '../interfaces/records.js';
import { type AgentTool, toolResult } from '../interfaces/tool.js';
import { isReservedSessionKey } from '../keys/index.js';
import type { SessionLineage } from '../policy/index.js';
import { searchTerms } from '../store/search-text.js';
import { searchSnippet } from './search-snippet.js';
import { queryTouchesSecret } from './secret-query.js';
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
import {
  countWiderScope,
  forkLineages,
  hiddenCount,
  hiddenReason,
  isTreeScoped,
  knownKinds,
  mayShow,
  refusedForks,
  type VisibleScope,
  visibleScope,
} from './visible-scope.js';

/** Hits sessions_search returns when `limit` is not given. */
export const SESSIONS_SEARCH_DEFAULT_LIMIT = 10;
/** The most hits sessions_search returns. */
export const SESSIONS_SEARCH_MAX_LIMIT = 50;

export const SessionsSearchParams = Type.Object(
  {
    query: Type.String({
      minLength: 1,
      maxLength: 500,
      description: 'Words to find; a message matches when it holds every word (case-insensitive).',
    }),
    kinds: Type.Optional(
      Type.Array(Type.String({ maxLength: 32 }), {
        maxItems: 16,
        description: 'Only sessions of these kinds: main, dm, group, cron, hook, node, subagent, other.',
      }),
    ),
    sessionKey: Type.Optional(
      Type.String({ minLength: 1, maxLength: 512, description: 'Only this session (key or sessionId).' }),
    ),
    limit: Type.Optional(
      Type.Number({
        minimum: 1,
        description: `Most hits (default ${SESSIONS_SEARCH_DEFAULT_LIMIT}, at most ${SESSIONS_SEARCH_MAX_LIMIT}).`,
      }),
    ),
    offset: Type.Optional(
      Type.Number({
        minimum: 0,
        description: 'Skip this many hits (default 0); pass nextOffset to page on.',
      }),
    ),
  },
  { additionalProperties: false },
);

/** One hit of sessions_search. `messageIndex` is the message's 0-based position in its transcript. */
export interface SessionsSearchHit {
  /** The session key in display form. */
  sessionKey: string;
  /** The 0-based position of the message in its transcript. */
  messageIndex: number;
  /** Who wrote the message. */
  role: MessageRole;
  /** The message's timestamp (epoch ms). */
  at: number;
  /** A redacted excerpt around the first matching word. */
  snippet: string;
}

/** The result of sessions_search. */
export interface SessionsSearchToolResult {
  /** How many hits `hits` holds. */
  count: number;
  /** The visible hits, best first. */
  hits: SessionsSearchHit[];
  /** True when a secret was redacted from a snippet. */
  redacted: boolean;
  /** Present when more hits match: the `offset` of the next page. */
  nextOffset?: number;
  /** How many matching messages visibility hid, and why. */
  filtered?: { hidden: number; reason: string };
}

/** What sessions_search answers when nothing matches. */
const noHits = (): SessionsSearchToolResult => ({ count: 0, hits: [], redacted: false });

/** Creates the `sessions_search` tool for one requester. */
export function createSessionsSearchTool(scope: ToolScope): AgentTool<typeof SessionsSearchParams> {
  return {
    name: 'sessions_search',
    description:
      'Search the transcripts of the sessions you can see for words, best matches first. Each hit names the ' +
      'session and message and shows a redacted snippet; tool results are not searched.',
    parameters: SessionsSearchParams,
    async execute(_toolCallId, rawArgs) {
      const args = validateToolArgs(
        'sessions_search',
        SessionsSearchParams,
        dropNonFinite(rawArgs, ['limit', 'offset']),
      );
      if (!args.ok) return failure('error', args.error);
      const terms = searchTerms(args.value.query);
      if (terms.length === 0) {
        return failure(
          'error',
          'The query has no words to search for: pass one or more words (letters or digits).',
        );
      }
      let only: string | undefined;
      if (args.value.sessionKey !== undefined) {
        const target = await findAllowedTarget(scope, args.value.sessionKey, 'history');
        if (!target.ok) return failure(target.failure.status, target.failure.error);
        only = target.session.key;
      }
      // The index holds configured secrets (a store does not know them): a query that could confirm
      // one gets the answer of a query that matches nothing, after the same work as any search.
      const touchesSecret = queryTouchesSecret(args.value.query, configuredSecrets(scope.options.config));
      try {
        const result = await search(scope, { ...args.value, terms, only });
        return toolResult(touchesSecret ? noHits() : result);
      } catch (error) {
        const f = gatewayFailure(error, 'Searching the transcripts failed.');
        return failure(f.status, f.error);
      }
    },
  };
}

async function search(
  scope: ToolScope,
  args: { terms: string[]; kinds?: string[]; only?: string; limit?: number; offset?: number },
): Promise<SessionsSearchToolResult> {
  const { gateway, config, sandboxed = false } = scope.options;
  const limit = clampInt(args.limit, SESSIONS_SEARCH_DEFAULT_LIMIT, 1, SESSIONS_SEARCH_MAX_LIMIT);
  const offset = clampInt(args.offset, 0, 0, Number.MAX_SAFE_INTEGER);
  const kinds = knownKinds(args.kinds);
  const query = args.terms.join(' ');
  const filter = {
    query,
    ...(kinds.length > 0 ? { kinds } : {}),
    ...(args.only !== undefined ? { keys: [args.only] } : {}),
  };

  const visible = await visibleScope(scope);
  // A single allowed session needs no other scope and hides nothing; else the visible sessions
  // (the guard still checks every hit).
  const scoped = args.only !== undefined ? filter : { ...filter, ...visible.filter };
  const [page, wider, forkMatches] = await Promise.all([
    gateway.call('sessions.search', { ...scoped, limit, ...(offset > 0 ? { offset } : {}) }),
    args.only !== undefined
      ? undefined
      : countWiderScope(
          visible,
          async (extra) => (await gateway.call('sessions.search', { ...filter, ...extra, limit: 0 })).total,
          defaultAgentId(config),
        ),
    args.only !== undefined
      ? { keys: new Set<string>(), matches: 0 }
      : refusedForkMatches(scope, visible, filter),
  ]);
  const lineages = await hitLineages(scope, visible, page.hits);

  const redactor = createRedactor(configuredSecrets(config));
  let redacted = false;
  const hits: SessionsSearchHit[] = [];
  let refused = 0;
  for (const { sessionKey, message } of page.hits) {
    if (!mayShow(scope, visible, sessionKey, 'history', lineages.get(sessionKey))) {
      if (!isReservedSessionKey(sessionKey) && !forkMatches.keys.has(sessionKey)) refused++;
      continue;
    }
    const snippet = searchSnippet(message, args.terms, redactor);
    redacted ||= snippet.redacted;
    hits.push({
      sessionKey: displayKey(scope, sessionKey),
      messageIndex: message.seq - 1,
      role: message.role,
      at: message.timestamp,
      snippet: snippet.snippet,
    });
  }
  const hidden = wider
    ? hiddenCount(wider, { total: page.total, refused: refused + forkMatches.matches })
    : 0;
  const nextOffset = offset + page.hits.length;
  return {
    count: hits.length,
    hits,
    redacted,
    ...(nextOffset < page.total ? { nextOffset } : {}),
    ...(hidden > 0
      ? {
          filtered: {
            hidden,
            reason: hiddenReason(visible.visibility, sandboxed, 'other matching messages'),
          },
        }
      : {}),
  };
}

/**
 * The forks in the search's scope that the guard refuses (see `refusedForks`; archived ones too, as
 * a search reaches them), and how many of their messages match.
 */
async function refusedForkMatches(
  scope: ToolScope,
  visible: VisibleScope,
  filter: { query: string; kinds?: SessionKind[] },
): Promise<{ keys: Set<string>; matches: number }> {
  const keys = await refusedForks(scope, visible, {
    ...(filter.kinds ? { kinds: filter.kinds } : {}),
    includeArchived: true,
  });
  if (keys.length === 0) return { keys: new Set(), matches: 0 };
  const { total } = await scope.options.gateway.call('sessions.search', { ...filter, keys, limit: 0 });
  return { keys: new Set(keys), matches: total };
}

/** The lineages the guard needs for the hits' sessions (forked ones, under `agent` or `all`). */
async function hitLineages(
  scope: ToolScope,
  visible: VisibleScope,
  hits: readonly { sessionKey: string }[],
): Promise<Map<string, SessionLineage>> {
  if (isTreeScoped(visible) || hits.length === 0) return new Map();
  const keys = [...new Set(hits.map((hit) => hit.sessionKey))];
  const { sessions } = await scope.options.gateway.call('sessions.list', { keys, includeArchived: true });
  return forkLineages(scope, visible, sessions);
}
