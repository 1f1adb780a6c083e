import { decodeNamedCharacterReference } from 'decode-named-character-reference';
import type { Token, Tokens } from 'marked';
import type {
  AlignType,
  BlockContent,
  Code,
  DefinitionContent,
  List,
  ListItem,
  PhrasingContent,
  Root,
  RootContent,
  Table,
  TableCell,
  TableRow,
  Text,
} from 'mdast';

type Block = RootContent | BlockContent | DefinitionContent;

/**
 * Converts `marked` lexer tokens into the mdast tree the dialects render. Text is taken from each
 * token's source (`raw`) with character references decoded, since marked leaves them encoded in
 * text tokens (and encodes some `&` itself).
 *
 * @param tokens - `Lexer.lex(markdown, { gfm: true })`
 * @returns the mdast root
 */
export function treeFromTokens(tokens: readonly Token[]): Root {
  return { type: 'root', children: blocks(tokens) as RootContent[] };
}

function blocks(tokens: readonly Token[] | undefined): Block[] {
  const out: Block[] = [];
  for (const token of tokens ?? []) {
    const node = block(token);
    if (node !== undefined) out.push(node);
  }
  return out;
}

function block(token: Token): Block | undefined {
  switch (token.type) {
    case 'paragraph':
    case 'text': // the content of a tight list item
      return { type: 'paragraph', children: trimEdges(inlines(token.tokens)) };
    case 'heading':
      return {
        type: 'heading',
        depth: Math.min(6, Math.max(1, token.depth)) as 1 | 2 | 3 | 4 | 5 | 6,
        children: inlines(token.tokens),
      };
    case 'hr':
      return { type: 'thematicBreak' };
    case 'blockquote':
      return { type: 'blockquote', children: blocks(token.tokens) as BlockContent[] };
    case 'code':
      return code(token as Tokens.Code);
    case 'list':
      return list(token as Tokens.List);
    case 'table':
      return table(token as Tokens.Table);
    case 'html':
      return { type: 'html', value: token.text.replace(/\n+$/, '') };
    case 'def':
      // GitHub footnotes are not marked syntax: a `[^1]: note` definition stays visible text.
      return token.tag.startsWith('^')
        ? { type: 'paragraph', children: [{ type: 'text', value: token.raw.trim() }] }
        : undefined;
    default:
      return undefined; // space, and extensions' tokens
  }
}

function code(token: Tokens.Code): Code {
  const info = (token.lang ?? '').trim();
  const space = info.search(/\s/);
  const lang = space === -1 ? info : info.slice(0, space);
  // Trailing blank lines show as nothing (marked keeps them in indented and unclosed code).
  const value = token.text.replace(/\n+$/, '');
  return { type: 'code', lang: lang === '' ? null : decodeEntities(lang), value };
}

function list(token: Tokens.List): List {
  return {
    type: 'list',
    ordered: token.ordered,
    start: token.ordered && token.start !== '' ? token.start : null,
    spread: token.loose,
    children: token.items.map(
      (item): ListItem => ({
        type: 'listItem',
        spread: item.loose,
        checked: item.task ? (item.checked ?? false) : null,
        children: blocks(item.tokens) as BlockContent[],
      }),
    ),
  };
}

function table(token: Tokens.Table): Table {
  const row = (cells: readonly Tokens.TableCell[]): TableRow => ({
    type: 'tableRow',
    children: cells.map((cell): TableCell => ({ type: 'tableCell', children: inlines(cell.tokens) })),
  });
  return {
    type: 'table',
    align: token.align.map((a): AlignType => a),
    children: [row(token.header), ...token.rows.map(row)],
  };
}

function inlines(tokens: readonly Token[] | undefined): PhrasingContent[] {
  const out: PhrasingContent[] = [];
  for (const token of tokens ?? []) {
    const node = inline(token);
    if (node === undefined) continue;
    const last = out[out.length - 1];
    // Adjacent text (split by escapes) is one node, as in mdast, so escapers see its neighbours.
    if (node.type === 'text' && last?.type === 'text') last.value += node.value;
    else {
      // Spaces before a hard break are not content.
      if (node.type === 'break' && last?.type === 'text') last.value = last.value.replace(/[ \t]+$/, '');
      out.push(node);
    }
  }
  return out;
}

function inline(token: Token): PhrasingContent | undefined {
  switch (token.type) {
    case 'text':
      return text(softBreaks(decodeEntities(token.raw)));
    case 'escape':
      return text(token.text);
    case 'strong':
      return { type: 'strong', children: inlines(token.tokens) };
    case 'em':
      return { type: 'emphasis', children: inlines(token.tokens) };
    case 'del':
      return { type: 'delete', children: inlines(token.tokens) };
    case 'codespan':
      return { type: 'inlineCode', value: token.text };
    case 'br':
      return { type: 'break' };
    case 'html':
      return { type: 'html', value: token.text };
    case 'link':
      return link(token as Tokens.Link);
    case 'image':
      return {
        type: 'image',
        url: decodeEntities(token.href),
        alt: plainText(inlines(token.tokens)),
      };
    default:
      return undefined;
  }
}

function link(token: Tokens.Link): PhrasingContent {
  if (token.autolink === true) {
    // Autolinks are literal: no character references, no markup.
    return { type: 'link', url: token.href, children: [text(token.text)] };
  }
  // `[^1]` resolved against a `[^1]: note` definition is a footnote reference, shown as written.
  if (/^\[\^[^\]]*\]$/.test(token.raw)) return text(token.raw);
  return { type: 'link', url: decodeEntities(token.href), children: inlines(token.tokens) };
}

/** A paragraph's content starts and ends with no whitespace (CommonMark); marked keeps it. */
function trimEdges(nodes: PhrasingContent[]): PhrasingContent[] {
  const first = nodes[0];
  if (first?.type === 'text') first.value = first.value.replace(/^[ \t\n]+/, '');
  const last = nodes[nodes.length - 1];
  if (last?.type === 'text') last.value = last.value.replace(/[ \t\n]+$/, '');
  return nodes.filter((node) => node.type !== 'text' || node.value !== '');
}

function text(value: string): Text {
  return { type: 'text', value };
}

/** The visible text of phrasing content, for an image's alt. */
function plainText(nodes: readonly PhrasingContent[]): string {
  let out = '';
  for (const node of nodes) {
    if ('value' in node) out += node.value;
    else if (node.type === 'image') out += node.alt ?? '';
    else if ('children' in node) out += plainText(node.children);
  }
  return out;
}

/** Spaces at the end and start of a soft line break are not content (CommonMark). */
function softBreaks(value: string): string {
  return value.includes('\n') ? value.replace(/[ \t]*\n[ \t]*/g, '\n') : value;
}

const REFERENCE = /&(?:#[xX]([0-9A-Fa-f]{1,6})|#([0-9]{1,7})|([A-Za-z][A-Za-z0-9]{1,31}));/g;

/**
 * Decodes CommonMark character references (`&amp;`, `&#35;`, `&#x1F600;`); unknown names stay as
 * written.
 */
export function decodeEntities(value: string): string {
  if (!value.includes('&')) return value;
  return value.replace(REFERENCE, (whole, hex: string | undefined, dec: string | undefined, name) => {
    if (name !== undefined) {
      const decoded = decodeNamedCharacterReference(name as string);
      return decoded === false ? whole : decoded;
    }
    const code = hex === undefined ? Number.parseInt(dec ?? '', 10) : Number.parseInt(hex, 16);
    return code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)
      ? '\uFFFD'
      : String.fromCodePoint(code);
  });
}
