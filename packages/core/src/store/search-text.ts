import type { TranscriptMessage } from '../interfaces/records.js';

/** The most words of a search query that are used; the rest are ignored. */
export const SEARCH_MAX_TERMS = 16;
/** The most characters of one message that are indexed for search. */
export const SEARCH_INDEX_MAX_CHARS = 32_768;

const WORD = /[\p{L}\p{N}]+/gu;

/**
 * Splits text into the words a transcript search matches: runs of letters and digits, lower-cased,
 * without repeats, at most `SEARCH_MAX_TERMS`. Everything else (punctuation, quotes,
 * operators such as `AND`, `*` or `"`) separates words, so no query text is ever read as syntax.
 *
 * @param text - a query as a person or a model typed it
 * @returns the words, in their first order
 */
export function searchTerms(text: string): string[] {
  const terms: string[] = [];
  for (const match of text.toLowerCase().matchAll(WORD)) {
    const term = match[0];
    if (!terms.includes(term)) terms.push(term);
    if (terms.length === SEARCH_MAX_TERMS) break;
  }
  return terms;
}

/**
 * The text of a transcript message that search indexes: a string `content`, or the `text` blocks
 * of block content joined by spaces, cut to {@link SEARCH_INDEX_MAX_CHARS}. Tool results, thinking,
 * tool-call arguments, images and attachments are not indexed. PostgreSQL indexes this text in the
 * statement that appends the message; SQLite computes the same text in SQL when a search first needs
 * it (the catch-up indexing before each search).
 *
 * @returns the text, or `undefined` when nothing of the message is indexed
 */
export function searchableText(message: TranscriptMessage): string | undefined {
  if (message.role === 'toolResult') return undefined;
  const { content } = message;
  let text: string | undefined;
  if (typeof content === 'string') text = content;
  else if (Array.isArray(content)) {
    const parts: string[] = [];
    for (const block of content) {
      if (block?.type === 'text' && typeof block.text === 'string') parts.push(block.text);
    }
    text = parts.length > 0 ? parts.join(' ') : undefined;
  }
  return text?.slice(0, SEARCH_INDEX_MAX_CHARS);
}

/**
 * A relevance score for stores that search by scanning (`MemoryStore`): 0 unless every term occurs
 * as a word; otherwise higher for more occurrences in a shorter text.
 *
 * @param text - what {@link searchableText} returned
 * @param terms - what {@link searchTerms} returned (not empty)
 */
export function scoreSearchText(text: string, terms: readonly string[]): number {
  const counts = new Map<string, number>(terms.map((t) => [t, 0]));
  let words = 0;
  for (const match of text.toLowerCase().matchAll(WORD)) {
    words++;
    const n = counts.get(match[0]);
    if (n !== undefined) counts.set(match[0], n + 1);
  }
  let hits = 0;
  for (const n of counts.values()) {
    if (n === 0) return 0;
    hits += n;
  }
  return hits / (words + 8);
}
