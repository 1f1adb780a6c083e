import type { Root } from 'mdast';
import type { Token } from './tokens.js';

/**
 * How one chat app shows text: a renderer from the parsed tree to tokens, and the platform's limit.
 * The chunker does the rest, the same way for every dialect.
 */
export interface Dialect {
  /** A short name for logs and test titles: `telegram-html`, `discord`, `whatsapp`, `commonmark`. */
  readonly name: string;
  /** The platform's longest message, in UTF-16 units. */
  readonly limit: number;
  /** Renders a parsed markdown tree. */
  render(tree: Root): Token[];
  /** Renders text that is not markdown, showing it exactly as written. */
  plain(text: string): Token[];
}
