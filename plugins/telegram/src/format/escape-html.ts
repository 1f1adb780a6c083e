/**
 * Escapes text for Telegram HTML: `&`, `<` and `>` become entities, so the text shows as written.
 *
 * @param text - plain text
 * @returns the text, safe to place between Telegram HTML tags
 */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;'));
}

/**
 * Escapes a value for a double-quoted Telegram HTML attribute (`href`, `class`).
 *
 * @param value - the raw attribute value
 * @returns the value with `&`, `<`, `>` and `"` escaped
 */
export function escapeAttribute(value: string): string {
  return escapeHtml(value).replace(/"/g, '&quot;');
}
