import type { TranscriptMessage } from '@colloquy/core';
import { searchableText, searchWords } from '@colloquy/core/store';
import type Database from 'better-sqlite3';

/** The SQL function that gives the words search indexes for a stored message (see below). */
export const SEARCH_WORDS_FUNCTION = 'colloquy_search_words';

/**
 * Defines {@link SEARCH_WORDS_FUNCTION}`(message)` on a connection: the words core's rule indexes for
 * the message's JSON (`searchWords(searchableText(message))`: built-in secrets redacted, cut, split,
 * lower-cased), joined by single spaces, or NULL when nothing of it is indexed. The index's `ascii`
 * tokenizer splits that text at the spaces only (every other character of a word is a letter, a
 * digit or a mark), so the index holds exactly core's words, as the other stores do.
 *
 * Only statements run by this package call it (the search catch-up and migration 9), never a
 * trigger, so the file stays writable by tools that do not have the function.
 */
export function defineSearchWordsFunction(db: Database.Database): void {
  db.function(SEARCH_WORDS_FUNCTION, { deterministic: true }, (json: unknown) => {
    if (typeof json !== 'string') return null;
    const text = searchableText(JSON.parse(json) as TranscriptMessage);
    const words = text === undefined ? [] : searchWords(text);
    return words.length === 0 ? null : words.join(' ');
  });
}
