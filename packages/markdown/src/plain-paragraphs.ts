import type { Paragraph, Root } from 'mdast';

/**
 * Anything that could be inline markdown: escapes, code, emphasis, strikethrough, links, HTML,
 * entities, table pipes, autolink literals, tabs and control characters.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are among what it looks for
const INLINE_SYNTAX = /[\\`*_~[\]<>&|@\x00-\x09\x0b-\x1f\x7f]|:\/\/|www\./i;

/** A line that could start a block (heading, quote, list, setext underline, rule, indented code), or a hard break. */
const BLOCK_SYNTAX = /(?:^|\n)(?: {4}| {0,3}(?:[#>+*=:-]|\d{1,9}[.)]))| {2}\n/;

/**
 * The tree of text that has no markdown syntax at all (most short replies): paragraphs split at
 * blank lines, with the spaces around line breaks dropped as CommonMark drops them. `undefined`
 * when the text may hold syntax and needs the full parse.
 *
 * @param text - markdown with `\n` line endings
 * @returns the tree, or `undefined`
 */
export function plainParagraphs(text: string): Root | undefined {
  if (INLINE_SYNTAX.test(text) || BLOCK_SYNTAX.test(text)) return undefined;
  const children: Paragraph[] = [];
  for (const block of text.split(/\n(?: *\n)+/)) {
    const value = block.replace(/^[ \n]+|[ \n]+$/g, '').replace(/ *\n */g, '\n');
    if (value !== '') children.push({ type: 'paragraph', children: [{ type: 'text', value }] });
  }
  return { type: 'root', children };
}
