import { type MessageSearchQuery, SEARCH_INDEX_MAX_CHARS, searchTerms } from '@colloquy/core';
import { sqlLimit } from './session-list-plan.js';

/**
 * The SQL expression for the text of a stored message (a JSON column) that search indexes, the
 * same text `searchableText` in core picks: a string `content`, or the `text` blocks joined by
 * spaces, cut to `SEARCH_INDEX_MAX_CHARS`; NULL for tool results and messages without text.
 *
 * @param column - the JSON expression, e.g. `new.message`
 */
export function indexedTextSql(column: string): string {
  const cut = (text: string) => `substr(${text}, 1, ${SEARCH_INDEX_MAX_CHARS})`;
  return `(CASE
    WHEN json_extract(${column}, '$.role') = 'toolResult' THEN NULL
    WHEN json_type(${column}, '$.content') = 'text' THEN ${cut(`json_extract(${column}, '$.content')`)}
    WHEN json_type(${column}, '$.content') = 'array' THEN ${cut(`(SELECT group_concat(json_extract(b.value, '$.text'), ' ')
      FROM json_each(${column}, '$.content') AS b
      WHERE json_extract(b.value, '$.type') = 'text' AND json_type(b.value, '$.text') = 'text')`)}
  END)`;
}

/** The statements of one search: its hits (when a limit allows any) and its count. */
export interface MessageSearchPlan {
  hits?: { sql: string; params: unknown[] };
  count: { sql: string; params: unknown[] };
}

/**
 * Turns a search into FTS5 SQL: every query word becomes a quoted phrase (so no query text is read
 * as FTS syntax), hits are ordered by `bm25` (then session key, then newest `seq`), and session
 * filters join the sessions table only when given.
 *
 * @returns the plan, or `undefined` when nothing can match (no words, an empty filter)
 */
export function planMessageSearch(query: MessageSearchQuery): MessageSearchPlan | undefined {
  const terms = searchTerms(query.text);
  if (terms.length === 0 || query.keys?.length === 0 || query.agentIds?.length === 0) return undefined;
  const params: unknown[] = [terms.map((t) => `"${t}"`).join(' ')];
  const filters: string[] = [];
  const kinds = [...new Set(query.kinds ?? [])];
  if (kinds.length > 0) {
    filters.push('s.kind IN (SELECT value FROM json_each(?))');
    params.push(JSON.stringify(kinds));
  }
  if (query.keys !== undefined) {
    filters.push('s.key IN (SELECT value FROM json_each(?))');
    params.push(JSON.stringify([...new Set(query.keys)]));
  }
  if (query.agentIds !== undefined) {
    filters.push('s.agent_id IN (SELECT value FROM json_each(?))');
    params.push(JSON.stringify([...new Set(query.agentIds)]));
  }
  const joinMessages = 'JOIN messages AS m ON m.id = messages_search.rowid';
  const joinSessions = filters.length > 0 ? ' JOIN sessions AS s ON s.key = m.session_key' : '';
  const where = ['messages_search MATCH ?', ...filters].join(' AND ');
  const count = {
    sql:
      filters.length > 0
        ? `SELECT count(*) FROM messages_search ${joinMessages}${joinSessions} WHERE ${where}`
        : 'SELECT count(*) FROM messages_search WHERE messages_search MATCH ?',
    params: filters.length > 0 ? params : params.slice(0, 1),
  };
  const limit = sqlLimit(query.limit);
  if (limit === 0) return { count };
  const offset = query.offset !== undefined && query.offset > 0 ? Math.floor(query.offset) : 0;
  const hits = {
    sql: `SELECT m.session_key AS sessionKey, m.message AS message FROM messages_search ${joinMessages}${joinSessions}
      WHERE ${where} ORDER BY messages_search.rank, m.session_key, m.seq DESC LIMIT ? OFFSET ?`,
    params: [...params, limit, offset],
  };
  return { hits, count };
}
