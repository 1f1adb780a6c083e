import { Lexer, type MarkedOptions } from 'marked';
import type { Root } from 'mdast';
import { treeFromTokens } from './from-marked.js';
import { plainParagraphs } from './plain-paragraphs.js';

const options: MarkedOptions = { gfm: true, silent: false };

/**
 * Parses model markdown (CommonMark with the GitHub extensions: tables, strikethrough, task items,
 * autolink literals) into an mdast tree, with line endings made `\n`. Raw HTML stays in `html`
 * nodes; renderers show it as text. Text without markdown syntax is not lexed at all.
 *
 * @param markdown - the model's text
 * @returns the tree (mdast `Root`)
 */
export function parseMarkdown(markdown: string): Root {
  const text = markdown.includes('\r') ? markdown.replace(/\r\n?/g, '\n') : markdown;
  return plainParagraphs(text) ?? parseTokens(text);
}

/** The full parse, without the plain-text shortcut (for tests that compare the two). */
export function parseTokens(text: string): Root {
  try {
    return treeFromTokens(Lexer.lex(text, options));
  } catch {
    // marked throws only on an internal loop guard: the text is then shown as it is.
    return { type: 'root', children: [{ type: 'paragraph', children: [{ type: 'text', value: text }] }] };
  }
}
