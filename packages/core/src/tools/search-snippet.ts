import type { Redactor } from '../history/index.js';

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
 * A short excerpt of a message around the first word of the query: the whole text is redacted
 * first (so a cut never exposes part of a secret), whitespace is folded, and the window is cut to
 * `SEARCH_SNIPPET_CHARS` without splitting a surrogate pair, with `…` where text was cut.
 *
 * @param text - the message text search indexes
 * @param terms - the query words (`searchTerms`)
 * @param redactor - the history redactor, with the configured secrets
 */
export function searchSnippet(text: string, terms: readonly string[], redactor: Redactor): Snippet {
  const redaction = redactor(text);
  const flat = redaction.text.replace(/\s+/g, ' ').trim();
  const words = terms.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|');
  const found = words === '' ? -1 : flat.search(new RegExp(`(?<![\\p{L}\\p{N}])(?:${words})`, 'iu'));
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
