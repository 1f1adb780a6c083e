import type { Root } from 'mdast';
import { fromMarkdown } from 'mdast-util-from-markdown';
import { gfmFromMarkdown } from 'mdast-util-gfm';
import { gfm } from 'micromark-extension-gfm';

// Built once: combining the GFM syntax extensions costs more than parsing a short reply.
const extensions = [gfm()];
const mdastExtensions = [gfmFromMarkdown()];

/**
 * Parses model markdown (CommonMark with the GitHub extensions: tables, strikethrough, task items,
 * autolink literals, footnotes) into an mdast tree, with line endings made `\n`. Raw HTML stays in `html` nodes; renderers show
 * it as text.
 *
 * @param markdown - the model's text
 * @returns the tree (mdast `Root`)
 */
export function parseMarkdown(markdown: string): Root {
  return fromMarkdown(markdown.replace(/\r\n?/g, '\n'), { extensions, mdastExtensions });
}
