import type { TranscriptMessage } from '@colloquy/core';
import { searchableText, searchWords } from '@colloquy/core/store';

/** PostgreSQL keeps positions 1 to 16,383 in a tsvector; a larger one is stored as 16,383. */
const MAX_POSITION = 16_383;
/** PostgreSQL keeps at most 256 positions of one lexeme. */
const MAX_POSITIONS_PER_WORD = 256;

/**
 * The `tsvector` of a message's search entry, as text: each of core's words for it
 * (`searchWords(searchableText(message))`: built-in secrets redacted before the text is cut, lower-cased
 * by Unicode's rules) with its positions, e.g. `'crane':2,5 'harbour':1`. Cast to `tsvector`, it is
 * stored as it stands: no parser or dictionary of the database splits, lower-cases or drops a word,
 * so the database's locale and text search configuration change nothing, and every store indexes the
 * same words. A word holds letters, digits and marks only, so it needs no escaping inside its quotes.
 *
 * @returns the literal; empty when nothing of the message is indexed
 */
export function searchVector(message: TranscriptMessage): string {
  const text = searchableText(message);
  if (text === undefined) return '';
  const positions = new Map<string, number[]>();
  for (const [i, word] of searchWords(text).entries()) {
    const at = positions.get(word);
    const position = Math.min(i + 1, MAX_POSITION);
    if (at === undefined) positions.set(word, [position]);
    else if (at.length < MAX_POSITIONS_PER_WORD && at[at.length - 1] !== position) at.push(position);
  }
  const lexemes: string[] = [];
  for (const [word, at] of positions) lexemes.push(`'${word}':${at.join(',')}`);
  return lexemes.join(' ');
}

/**
 * The `tsquery` of a search, as text: every term must occur (`'harbour' & 'crane'`). Terms come from
 * `searchTerms`, so they hold letters, digits and marks only, and are matched as they stand.
 *
 * @param terms - the query's words (not empty)
 */
export function searchQuery(terms: readonly string[]): string {
  return terms.map((term) => `'${term}'`).join(' & ');
}
