import {
  foldAlsoKeys,
  type MessageSearchQuery,
  SEARCH_INDEX_MAX_CHARS,
  searchTerms,
} from '@colloquy/core/store';
import { SEARCH_WORDS_FUNCTION } from './search-words-function.js';
import { sqlLimit } from './session-list-plan.js';

/**
 * The SQL expression for the text of a stored message (a JSON column) as written, the text
 * `messageSearchText` in core picks: a string `content`, or the `text` blocks joined by spaces, cut to
 * `SEARCH_INDEX_MAX_CHARS` (unless `cut` is false); NULL for tool results and messages without text.
 * Schemas 4 to 8 indexed this text, with FTS5's own tokenizer; since schema 9 the index holds core's
 * words ({@link SEARCH_WORDS_FUNCTION}), and this expression only tells whether an update changed a
 * message's text (the `messages_search_update` trigger).
 *
 * It is written for speed: every JSON function reads
 * the column itself (SQLite parses a value once per statement and reuses the parse), content of one
 * block (the common case) is read by path without the `json_each` subquery, and blocks are only
 * ever addressed by their path in the message, so a block that is not an object (a bare string,
 * say) is skipped rather than parsed as JSON of its own, which would fail.
 *
 * @param column - the JSON expression, e.g. `new.message`
 * @param cut - cut the text with `substr` (as the released migrations do; it also ends a text at its
 *   first NUL character); false gives the whole text
 */
export function indexedTextSql(column: string, cut = true): string {
  const cutText = (text: string) => (cut ? `substr(${text}, 1, ${SEARCH_INDEX_MAX_CHARS})` : text);
  const textOf = (block: string) =>
    `json_extract(${column}, ${block} || '.type') = 'text' AND json_type(${column}, ${block} || '.text') = 'text'`;
  const firstBlock = `(CASE WHEN ${textOf(`'$.content[0]'`)} THEN json_extract(${column}, '$.content[0].text') END)`;
  const allBlocks = `(SELECT group_concat(json_extract(${column}, b.fullkey || '.text'), ' ')
      FROM json_each(${column}, '$.content') AS b WHERE b.type = 'object' AND ${textOf('b.fullkey')})`;
  return `(CASE WHEN json_extract(${column}, '$.role') = 'toolResult' THEN NULL
    ELSE (CASE json_type(${column}, '$.content')
      WHEN 'text' THEN ${cutText(`json_extract(${column}, '$.content')`)}
      WHEN 'array' THEN ${cutText(`(CASE json_array_length(${column}, '$.content') WHEN 1 THEN ${firstBlock} ELSE ${allBlocks} END)`)}
    END)
  END)`;
}

/**
 * The statement that indexes, into `index`, the messages the file's index does not hold yet: those
 * after the `search_state` watermark, and those whose text an update changed (`search_stale`, schema
 * 9). Each entry is the words core's rule gives ({@link SEARCH_WORDS_FUNCTION}), computed once a row:
 * a plain subquery would be flattened into the outer `WHERE`, evaluating it twice.
 */
export function indexPendingSql(index: string): string {
  return `WITH pending AS MATERIALIZED (
      SELECT id, ${SEARCH_WORDS_FUNCTION}(message) AS body FROM messages
        WHERE id > (SELECT indexed_up_to FROM search_state)
      UNION ALL
      SELECT m.id, ${SEARCH_WORDS_FUNCTION}(m.message) FROM search_stale AS s JOIN messages AS m ON m.id = s.id)
    INSERT INTO ${index} (rowid, body) SELECT id, body FROM pending WHERE body IS NOT NULL`;
}

/**
 * How the full-text indexes split their text (schema 9): at every ASCII character that is not a
 * letter or a digit. The indexed text is core's words joined by spaces, and a word holds letters,
 * digits and marks only, so the index's tokens are exactly core's words (and a query's quoted words
 * exactly its terms).
 */
export const SEARCH_TOKENIZER = 'ascii';

/**
 * The temporary index a read-only store searches besides the file's own: it cannot write the file,
 * so it indexes what a writer has not indexed yet here, per search, and drops it with the search's
 * read transaction. Tokenized exactly as `messages_search`.
 */
export const PENDING_INDEX = 'messages_search_pending';

/** Creates {@link PENDING_INDEX} in the connection's `temp` schema. */
export const CREATE_PENDING_INDEX_SQL = `CREATE VIRTUAL TABLE temp.${PENDING_INDEX} USING fts5(
  body, content = '', tokenize = '${SEARCH_TOKENIZER}'
)`;

/** The statements of one search: its hits (when a limit allows any) and its count. */
export interface MessageSearchPlan {
  hits?: { sql: string; params: unknown[] };
  count: { sql: string; params: unknown[] };
}

/** The full-text index of the transcripts (schema 4, rebuilt with core's words in schema 9). */
export const MESSAGE_INDEX = 'messages_search';

/**
 * Turns a search into FTS5 SQL: every query word becomes a quoted phrase (so no query text is read
 * as FTS syntax), hits are ordered by `bm25` (then session key, then newest `seq`), and session
 * filters join the sessions table only when given.
 *
 * @param indexes - the FTS5 tables to search, by unqualified name; with more than one (a read-only
 *   store adds a temporary index of what the file's index lacks), counts are summed and hits merged
 *   by rank
 * @returns the plan, or `undefined` when nothing can match (no words, an empty filter)
 */
export function planMessageSearch(
  asked: MessageSearchQuery,
  indexes: readonly string[] = [MESSAGE_INDEX],
): MessageSearchPlan | undefined {
  const query = foldAlsoKeys(asked);
  const terms = searchTerms(query.text);
  if (terms.length === 0 || query.keys?.length === 0 || query.agentIds?.length === 0) return undefined;
  const params: unknown[] = [terms.map((t) => `"${t}"`).join(' ')];
  const filters: string[] = [];
  const kinds = [...new Set(query.kinds ?? [])];
  if (kinds.length > 0) {
    filters.push('s.kind IN (SELECT value FROM json_each(?))');
    params.push(JSON.stringify(kinds));
  }
  const scope: string[] = [];
  const scopeParams: unknown[] = [];
  if (query.keys !== undefined) {
    scope.push('s.key IN (SELECT value FROM json_each(?))');
    scopeParams.push(JSON.stringify([...new Set(query.keys)]));
  }
  if (query.agentIds !== undefined) {
    scope.push('s.agent_id IN (SELECT value FROM json_each(?))');
    scopeParams.push(JSON.stringify([...new Set(query.agentIds)]));
  }
  if (query.alsoKeys !== undefined) {
    // Left after folding only beside `keys` or `agentIds`: `(keys AND agentIds) OR key IN alsoKeys`.
    filters.push(`(${scope.join(' AND ')} OR s.key IN (SELECT value FROM json_each(?)))`);
    params.push(...scopeParams, JSON.stringify([...new Set(query.alsoKeys)]));
  } else {
    filters.push(...scope);
    params.push(...scopeParams);
  }
  const joinSessions = filters.length > 0 ? ' JOIN sessions AS s ON s.key = m.session_key' : '';
  const from = (index: string) => `${index} JOIN messages AS m ON m.id = ${index}.rowid${joinSessions}`;
  const where = (index: string) => [`${index} MATCH ?`, ...filters].join(' AND ');
  const countOf = (index: string) =>
    filters.length > 0
      ? `SELECT count(*) FROM ${from(index)} WHERE ${where(index)}`
      : `SELECT count(*) FROM ${index} WHERE ${index} MATCH ?`;
  const countParams = filters.length > 0 ? params : params.slice(0, 1);
  const count =
    indexes.length === 1
      ? { sql: countOf(indexes[0]!), params: countParams }
      : {
          sql: `SELECT ${indexes.map((index) => `(${countOf(index)})`).join(' + ')}`,
          params: indexes.flatMap(() => countParams),
        };
  const limit = sqlLimit(query.limit);
  if (limit === 0) return { count };
  const offset = query.offset !== undefined && query.offset > 0 ? Math.floor(query.offset) : 0;
  if (indexes.length === 1) {
    const index = indexes[0]!;
    const hits = {
      sql: `SELECT m.session_key AS sessionKey, m.message AS message FROM ${from(index)}
        WHERE ${where(index)} ORDER BY ${index}.rank, m.session_key, m.seq DESC LIMIT ? OFFSET ?`,
      params: [...params, limit, offset],
    };
    return { hits, count };
  }
  const parts = indexes.map(
    (index) => `SELECT m.session_key AS sessionKey, m.message AS message, m.seq AS seq, ${index}.rank AS rank
      FROM ${from(index)} WHERE ${where(index)}`,
  );
  const hits = {
    sql: `SELECT sessionKey, message FROM (${parts.join(' UNION ALL ')})
      ORDER BY rank, sessionKey, seq DESC LIMIT ? OFFSET ?`,
    params: [...indexes.flatMap(() => params), limit, offset],
  };
  return { hits, count };
}
