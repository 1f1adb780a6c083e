import { foldAlsoKeys, type MessageSearchQuery, searchTerms } from '@colloquy/core/store';
import { searchQuery } from './search-vector.js';
import type { Sql } from './session-list-sql.js';
import { sqlLimit } from './session-list-sql.js';

/** The statements of one search: its hits (when a limit allows any) and its count. */
export interface MessageSearchSql {
  hits?: Sql;
  count: Sql;
}

/**
 * Turns a search into SQL over the `search` tsvector column and its GIN index: the query words
 * (split by `searchTerms`, the rule the column's words were split by, so nothing is read as tsquery
 * syntax and no database parser or locale is involved) must all occur; hits are ordered by
 * `ts_rank`, then session key, then newest `seq`. Session filters join the sessions table only when
 * given.
 *
 * @returns the statements, or `undefined` when nothing can match (no words, an empty filter)
 */
export function messageSearchSql(asked: MessageSearchQuery): MessageSearchSql | undefined {
  const query = foldAlsoKeys(asked);
  const terms = searchTerms(query.text);
  if (terms.length === 0 || query.keys?.length === 0 || query.agentIds?.length === 0) return undefined;
  const values: unknown[] = [searchQuery(terms)];
  const param = (value: unknown): string => {
    values.push(value);
    return `$${values.length}`;
  };
  const filters: string[] = [];
  const kinds = [...new Set(query.kinds ?? [])];
  if (kinds.length > 0) filters.push(`s.kind = ANY(${param(kinds)})`);
  const scope = [
    ...(query.keys !== undefined ? [`s.key = ANY(${param([...new Set(query.keys)])})`] : []),
    ...(query.agentIds !== undefined ? [`s.agent_id = ANY(${param([...new Set(query.agentIds)])})`] : []),
  ];
  // `alsoKeys` is left after folding only beside `keys` or `agentIds`: `(keys AND agentIds) OR key IN alsoKeys`.
  if (query.alsoKeys !== undefined) {
    filters.push(`(${scope.join(' AND ')} OR s.key = ANY(${param([...new Set(query.alsoKeys)])}))`);
  } else {
    filters.push(...scope);
  }
  const from = `FROM messages AS m${filters.length > 0 ? ' JOIN sessions AS s ON s.key = m.session_key' : ''}`;
  const where = ` WHERE ${['m.search @@ $1::tsquery', ...filters].join(' AND ')}`;
  const count: Sql = { text: `SELECT count(*) AS count ${from}${where}`, values: [...values] };
  const limit = sqlLimit(query.limit);
  if (limit === 0) return { count };
  const offset = query.offset !== undefined && query.offset > 0 ? Math.floor(query.offset) : 0;
  const page = `${limit < 0 ? '' : ` LIMIT ${param(limit)}`} OFFSET ${param(offset)}`;
  return {
    count,
    hits: {
      text: `SELECT m.session_key, m.seq, m.message, m.platform_message_id ${from}${where}
        ORDER BY ts_rank(m.search, $1::tsquery) DESC, m.session_key, m.seq DESC${page}`,
      values,
    },
  };
}
