/**
 * Cutting text to a length without splitting a surrogate pair, and measuring UTF-8 sizes.
 */

/** What follows a truncated text. */
export const TRUNCATION_SUFFIX = '\n…(truncated)…';

/**
 * Cuts `text` to at most `limit` UTF-16 units, never between the two halves of a surrogate pair,
 * and appends `TRUNCATION_SUFFIX` when anything was cut.
 *
 * @param text - the text
 * @param limit - the most UTF-16 units kept (before the suffix)
 * @returns `{ text, truncated }`
 */
export function truncateText(text: string, limit: number): { text: string; truncated: boolean } {
  if (text.length <= limit) return { text, truncated: false };
  return { text: cutText(text, limit) + TRUNCATION_SUFFIX, truncated: true };
}

/**
 * Cuts `text` to at most `limit` UTF-16 units, never between the two halves of a surrogate pair,
 * and adds nothing.
 *
 * @param text - the text
 * @param limit - the most UTF-16 units kept
 * @returns `text`, or its start
 */
export function cutText(text: string, limit: number): string {
  if (text.length <= limit) return text;
  let cut = Math.max(0, Math.floor(limit));
  const last = text.charCodeAt(cut - 1);
  if (cut > 0 && last >= 0xd800 && last <= 0xdbff) cut -= 1;
  return text.slice(0, cut);
}

/**
 * The size of a string in UTF-8 bytes, without encoding it. A lone surrogate counts 3 bytes (as
 * `TextEncoder` encodes it as U+FFFD).
 *
 * @param text - the string
 * @returns its UTF-8 byte length
 */
export function utf8ByteLength(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i += 1;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}
