import { ColloquyError, normalizeSessionKey } from '@colloquy/core';
import type { GatewayResult } from '@colloquy/core/gateway';
import { type MessageSearchQuery, searchTerms } from '@colloquy/core/store';
import type { RuntimeContext } from '../runtime/runtime-context.js';
import { readParams } from './params.js';
import { readKinds } from './sessions-methods.js';

/** Default and maximum `limit` of `sessions.search`. */
export const SEARCH_DEFAULT_LIMIT = 10;
export const SEARCH_MAX_LIMIT = 50;

/**
 * `sessions.search`: full-text search over transcripts, best hits first, with `kinds`, `keys`,
 * `agentIds`, `limit` (default 10, at most 50; 0 only counts) and `offset` pushed into the store
 * query, and how many messages matched. Like `sessions.list` it applies no visibility: the session
 * tools scope it and check every hit.
 *
 * @throws `INVALID_ARGUMENT` for a query without words, an unknown kind or a bad number
 */
export async function sessionsSearch(
  ctx: RuntimeContext,
  params: unknown,
): Promise<GatewayResult<'sessions.search'>> {
  const p = readParams('sessions.search', params);
  p.only(['query', 'kinds', 'keys', 'agentIds', 'alsoKeys', 'limit', 'offset']);
  const text = p.string('query');
  if (searchTerms(text).length === 0) {
    throw new ColloquyError(
      'INVALID_ARGUMENT',
      'sessions.search: "query" has no words to search for; pass one or more words (letters or digits).',
      { method: 'sessions.search', field: 'query' },
    );
  }
  const kinds = readKinds(p, 'sessions.search');
  const keys = p.optionalStrings('keys');
  const agentIds = p.optionalStrings('agentIds');
  const alsoKeys = p.optionalStrings('alsoKeys');
  const limit = Math.min(Math.floor(p.optionalNumber('limit', 0) ?? SEARCH_DEFAULT_LIMIT), SEARCH_MAX_LIMIT);
  const offset = Math.floor(p.optionalNumber('offset', 0) ?? 0);
  const query: MessageSearchQuery = { text, limit };
  if (kinds && kinds.length > 0) query.kinds = kinds;
  if (keys) query.keys = keys.map(normalizeSessionKey);
  if (agentIds) query.agentIds = agentIds.map((id) => id.trim().toLowerCase());
  if (alsoKeys) query.alsoKeys = alsoKeys.map(normalizeSessionKey);
  if (offset > 0) query.offset = offset;
  return ctx.store.searchMessages(query);
}
