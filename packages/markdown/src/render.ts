import { chunkTokens } from './chunk-tokens.js';
import type { Dialect } from './dialect.js';
import { parseMarkdown } from './parse.js';
import type { Token } from './tokens.js';

/** Options of {@link renderMessages}. */
export interface RenderOptions {
  /** `markdown` (default) parses the text; `plain` shows it exactly as written. */
  format?: 'markdown' | 'plain';
  /** The longest message in UTF-16 units; default the dialect's `limit`. At least 64. */
  limit?: number;
}

/**
 * Turns the model's text into the messages to send: parsed once, rendered in the app's dialect and
 * split on block boundaries, never inside an escape, a tag or a code fence (a fence cut in two is
 * closed and reopened with its language).
 *
 * @param text - the model's reply
 * @param dialect - the chat app's dialect, e.g. `telegramHtml` or `discord`
 * @param options - format and limit
 * @returns the messages, in order; `[]` when there is no visible text
 * @throws RangeError when `limit` is below 64
 * @example
 * ```ts
 * import { discord, renderMessages } from '@colloquy/markdown';
 * for (const content of renderMessages(reply, discord)) await channel.send({ content });
 * ```
 */
export function renderMessages(text: string, dialect: Dialect, options: RenderOptions = {}): string[] {
  return chunkTokens(renderTokens(text, dialect, options.format), options.limit ?? dialect.limit);
}

/**
 * Renders the whole text in one piece, without a length limit.
 *
 * @param text - the model's reply
 * @param dialect - the chat app's dialect
 * @param format - `markdown` (default) or `plain`
 * @returns the rendered text
 */
export function renderText(
  text: string,
  dialect: Dialect,
  format: 'markdown' | 'plain' = 'markdown',
): string {
  const closers: string[] = [];
  let out = '';
  for (const token of renderTokens(text, dialect, format)) {
    if (token.kind === 'open') {
      out += token.text;
      closers.push(token.close);
    } else if (token.kind === 'close') out += closers.pop() ?? '';
    else out += token.text;
  }
  return out;
}

function renderTokens(text: string, dialect: Dialect, format: 'markdown' | 'plain' = 'markdown'): Token[] {
  return format === 'plain' ? dialect.plain(text) : dialect.render(parseMarkdown(text));
}
