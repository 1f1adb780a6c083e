import { createRedactor, cutText } from '../history/index.js';
import type { TranscriptMessage } from '../interfaces/records.js';

/** The most words of a search query that are used; the rest are ignored. */
export const SEARCH_MAX_TERMS = 16;
/** The most characters of one message that are indexed for search (after redaction). */
export const SEARCH_INDEX_MAX_CHARS = 32_768;
/**
 * The most UTF-16 units of one indexed word. A longer word, in a message or in a query, is cut to
 * this length (never inside a surrogate pair), so it is still found, and no index meets its own
 * limit (PostgreSQL refuses lexemes of 2,048 bytes or more).
 */
export const SEARCH_MAX_WORD_CHARS = 256;

// A word starts with a letter or a digit and goes on through letters, digits and combining marks
// (so a word in an Indic script, or one typed with decomposed accents, stays one word).
const WORD = /[\p{L}\p{N}][\p{L}\p{M}\p{N}]*/gu;

// The built-in secret patterns only: configured secrets are not known to a store. Compiled once.
const redactBuiltIn = createRedactor();

/**
 * Splits text into the words a transcript search indexes and matches, in order and with repeats:
 * the text is put in Unicode normal form C and lower-cased (by Unicode's rules, whatever a
 * database's locale), then every run of letters, digits and combining marks that starts with a
 * letter or a digit is a word, cut to {@link SEARCH_MAX_WORD_CHARS}. Everything else (spaces of any
 * kind, punctuation, emoji, zero-width characters) separates words, so `bob@corp.io`, `/usr/local`,
 * `v1.2.3` and `3.14` are found by their parts. Every store indexes exactly these words; a change to
 * this rule needs a re-indexing migration in each of them.
 *
 * @param text - what {@link searchableText} returned
 * @returns the words, each made of letters, digits and marks only
 */
export function searchWords(text: string): string[] {
  const words: string[] = [];
  for (const match of text.normalize('NFC').toLowerCase().matchAll(WORD)) words.push(cutWord(match[0]));
  return words;
}

/**
 * The words of a query, split as {@link searchWords} splits indexed text, without repeats, at most
 * `SEARCH_MAX_TERMS`. Quotes and operators such as `AND`, `*` or `"` are separators, so no query text
 * is ever read as syntax; a message matches when it holds every word.
 *
 * @param text - a query as a person or a model typed it
 * @returns the words, in their first order
 */
export function searchTerms(text: string): string[] {
  const terms: string[] = [];
  for (const match of text.normalize('NFC').toLowerCase().matchAll(WORD)) {
    const term = cutWord(match[0]);
    if (!terms.includes(term)) terms.push(term);
    if (terms.length === SEARCH_MAX_TERMS) break;
  }
  return terms;
}

/**
 * The text of a message that search is about, whole and as written: a string `content`, or the
 * `text` blocks of block content joined by spaces. Tool results, thinking, tool-call arguments,
 * images and attachments are not part of it.
 *
 * @returns the text, or `undefined` when the message has none that search covers
 */
export function messageSearchText(message: TranscriptMessage): string | undefined {
  if (message.role === 'toolResult') return undefined;
  const { content } = message;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  const parts: string[] = [];
  for (const block of content) {
    if (block?.type === 'text' && typeof block.text === 'string') parts.push(block.text);
  }
  return parts.length > 0 ? parts.join(' ') : undefined;
}

/**
 * The text of a transcript message that search indexes: its text (`messageSearchText`) with
 * the built-in secret patterns redacted (API keys, bearer tokens, private keys, passwords in URLs;
 * see `redactSecrets`) from the whole text, then cut to {@link SEARCH_INDEX_MAX_CHARS}. Redacting
 * before cutting means no part of a secret is ever indexed, not even one that crosses the cut.
 * Stores index `searchWords(searchableText(message))`.
 *
 * @returns the text, or `undefined` when nothing of the message is indexed
 */
export function searchableText(message: TranscriptMessage): string | undefined {
  const text = messageSearchText(message);
  return text === undefined ? undefined : cutText(redactBuiltIn(text).text, SEARCH_INDEX_MAX_CHARS);
}

/**
 * A relevance score for stores that search by scanning (`MemoryStore`): 0 unless every term occurs
 * as a word; otherwise higher for more occurrences in a shorter text.
 *
 * @param words - what {@link searchWords} returned for a message
 * @param terms - what {@link searchTerms} returned (not empty)
 */
export function scoreSearchWords(words: readonly string[], terms: readonly string[]): number {
  const counts = new Map<string, number>(terms.map((t) => [t, 0]));
  for (const word of words) {
    const n = counts.get(word);
    if (n !== undefined) counts.set(word, n + 1);
  }
  let hits = 0;
  for (const n of counts.values()) {
    if (n === 0) return 0;
    hits += n;
  }
  return hits / (words.length + 8);
}

function cutWord(word: string): string {
  return cutText(word, SEARCH_MAX_WORD_CHARS);
}
