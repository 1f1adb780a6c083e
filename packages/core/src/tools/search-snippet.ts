import { cutText, type Redactor } from '../history/index.js';
import type { TranscriptMessage } from '../interfaces/records.js';
import { messageSearchText, SEARCH_INDEX_MAX_CHARS } from '../store/search-text.js';

/** The most UTF-16 units of a sessions_search snippet, not counting the `…` marks. */
export const SEARCH_SNIPPET_CHARS = 240;
/** How much text a snippet shows before the first matching word. */
const LEAD = 80;

/** A snippet and whether anything in the text it came from was redacted. */
export interface Snippet {
  /** The redacted excerpt, with `…` where text was cut. */
  snippet: string;
  /** True when a secret was redacted from the text. */
  redacted: boolean;
}

/**
 * A short excerpt of a message around the first word of the query. The message's whole text is
 * redacted first (configured secrets and the built-in patterns), and only then cut to the part search
 * indexes (`SEARCH_INDEX_MAX_CHARS`) and to the window, so no cut ever exposes part of a secret.
 * Whitespace is folded, and the window is cut to `SEARCH_SNIPPET_CHARS` without splitting a surrogate
 * pair, with `…` where text was cut.
 *
 * @param message - the matching message, as the store returned it
 * @param terms - the query words (`searchTerms`)
 * @param redactor - the history redactor, with the configured secrets
 */
export function searchSnippet(
  message: TranscriptMessage,
  terms: readonly string[],
  redactor: Redactor,
): Snippet {
  const redaction = redactor(messageSearchText(message) ?? '');
  const flat = cutText(redaction.text, SEARCH_INDEX_MAX_CHARS).replace(/\s+/g, ' ').trim();
  const words = terms.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|');
  const found = words === '' ? -1 : flat.search(new RegExp(`(?<![\\p{L}\\p{M}\\p{N}])(?:${words})`, 'iu'));
  let start = found <= LEAD ? 0 : found - LEAD;
  let end = Math.min(flat.length, start + SEARCH_SNIPPET_CHARS);
  if (end === flat.length) start = Math.max(0, end - SEARCH_SNIPPET_CHARS);
  if (isLowSurrogate(flat.charCodeAt(start))) start++;
  if (isLowSurrogate(flat.charCodeAt(end))) end--;
  const snippet = `${start > 0 ? '…' : ''}${flat.slice(start, end)}${end < flat.length ? '…' : ''}`;
  return { snippet, redacted: redaction.redacted };
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
