/**
 * A small, safe markdown parser for chat messages. It builds a plain data tree (no HTML, no DOM), so it
 * runs in Node for tests and in the page, where `render-markdown.ts` turns the tree into DOM nodes with
 * `textContent`. Raw HTML in the source is never interpreted: it stays text. Links keep only absolute
 * http(s) URLs.
 *
 * Supported: paragraphs (single newlines are line breaks), `#` headings, fenced code, block quotes,
 * bullet and numbered lists (nested by indentation), GFM tables, rules, `code`, **strong**, *em*,
 * ~~strike~~, [links](https://...), <https://autolinks> and bare https:// URLs.
 */

/** An inline node. */
export type Inline =
  | { type: 'text'; text: string }
  | { type: 'code'; text: string }
  | { type: 'strong' | 'em' | 'del'; children: Inline[] }
  | { type: 'link'; href: string; children: Inline[] }
  | { type: 'break' };

/** Column alignment of a table. */
export type Align = 'left' | 'center' | 'right' | null;

/** A block node. */
export type Block =
  | { type: 'paragraph'; children: Inline[] }
  | { type: 'heading'; level: number; children: Inline[] }
  | { type: 'code'; lang?: string; text: string }
  | { type: 'quote'; children: Block[] }
  | { type: 'list'; ordered: boolean; start: number; items: Block[][] }
  | { type: 'rule' }
  | { type: 'table'; align: Align[]; head: Inline[][]; rows: Inline[][][] };

const MAX_SOURCE_CHARS = 200_000;
const MAX_BLOCK_DEPTH = 12;
const MAX_INLINE_DEPTH = 10;

const FENCE = /^ {0,3}(`{3,}|~{3,})[ \t]*([^`\s]*)[^`]*$/;
const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const RULE = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const QUOTE = /^ {0,3}>[ ]?/;
const LIST_ITEM = /^( {0,3})([-*+]|\d{1,9}[.)])([ \t]+|$)(.*)$/;
const TABLE_DIVIDER = /^[ \t]*\|?[ \t]*:?-+:?[ \t]*(\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$/;

/**
 * Parses markdown into blocks.
 *
 * @param source - the markdown text (longer texts are cut at 200,000 characters)
 * @returns the block tree
 */
export function parseMarkdown(source: string): Block[] {
  const text = source.length > MAX_SOURCE_CHARS ? source.slice(0, MAX_SOURCE_CHARS) : source;
  return parseBlocks(text.replace(/\r\n?/g, '\n').split('\n'), 0);
}

/**
 * Returns the URL when it is an absolute `http:` or `https:` URL, else `undefined`.
 * `javascript:`, `data:`, relative and protocol-relative links are all refused.
 */
export function safeHref(raw: string): string | undefined {
  const trimmed = raw.trim();
  if (!/^https?:\/\//i.test(trimmed)) return undefined;
  try {
    const url = new URL(trimmed);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : undefined;
  } catch {
    return undefined;
  }
}

// --- blocks ---

function parseBlocks(lines: string[], depth: number): Block[] {
  const blocks: Block[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    if (line.trim() === '') {
      i += 1;
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence) {
      const marker = fence[1]!;
      const body: string[] = [];
      i += 1;
      while (i < lines.length && !isClosingFence(lines[i]!, marker)) body.push(lines[i++]!);
      i += 1;
      const lang = fence[2] ?? '';
      blocks.push(
        lang ? { type: 'code', lang, text: body.join('\n') } : { type: 'code', text: body.join('\n') },
      );
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      blocks.push({ type: 'heading', level: heading[1]!.length, children: parseInline(heading[2] ?? '') });
      i += 1;
      continue;
    }
    if (RULE.test(line)) {
      blocks.push({ type: 'rule' });
      i += 1;
      continue;
    }
    if (QUOTE.test(line) && depth < MAX_BLOCK_DEPTH) {
      const inner: string[] = [];
      while (i < lines.length && QUOTE.test(lines[i]!)) inner.push(lines[i++]!.replace(QUOTE, ''));
      blocks.push({ type: 'quote', children: parseBlocks(inner, depth + 1) });
      continue;
    }
    if (LIST_ITEM.test(line) && depth < MAX_BLOCK_DEPTH) {
      i = parseList(lines, i, depth, blocks);
      continue;
    }
    if (i + 1 < lines.length && line.includes('|') && TABLE_DIVIDER.test(lines[i + 1]!)) {
      const table = parseTable(lines, i);
      if (table) {
        blocks.push(table.block);
        i = table.next;
        continue;
      }
    }
    const para: string[] = [];
    while (i < lines.length && lines[i]!.trim() !== '' && (para.length === 0 || !startsBlock(lines[i]!))) {
      para.push(lines[i++]!.trim());
    }
    blocks.push({ type: 'paragraph', children: parseInline(para.join('\n')) });
  }
  return blocks;
}

function isClosingFence(line: string, marker: string): boolean {
  const trimmed = line.trim();
  return trimmed.length >= marker.length && trimmed.startsWith(marker) && new Set(trimmed).size === 1;
}

function startsBlock(line: string): boolean {
  return (
    FENCE.test(line) || HEADING.test(line) || RULE.test(line) || QUOTE.test(line) || LIST_ITEM.test(line)
  );
}

function parseList(lines: string[], start: number, depth: number, out: Block[]): number {
  const first = LIST_ITEM.exec(lines[start]!)!;
  const ordered = /\d/.test(first[2]!);
  const items: Block[][] = [];
  let i = start;
  while (i < lines.length) {
    const match = LIST_ITEM.exec(lines[i]!);
    if (!match || /\d/.test(match[2]!) !== ordered) break;
    const indent = match[1]!.length + match[2]!.length + Math.max(1, Math.min(match[3]!.length, 4));
    const body = [match[4]!];
    i += 1;
    while (i < lines.length) {
      const next = lines[i]!;
      if (next.trim() === '') {
        const following = nextNonBlank(lines, i + 1);
        if (following !== undefined && leadingSpaces(following) >= indent) {
          body.push('');
          i += 1;
          continue;
        }
        break;
      }
      if (leadingSpaces(next) >= Math.min(indent, 2)) {
        body.push(next.slice(Math.min(leadingSpaces(next), indent)));
        i += 1;
        continue;
      }
      if (startsBlock(next) || body[body.length - 1] === '') break;
      body.push(next.trim());
      i += 1;
    }
    items.push(parseBlocks(body, depth + 1));
    while (i < lines.length && lines[i]!.trim() === '' && nextIsSameList(lines, i, ordered)) i += 1;
  }
  out.push({ type: 'list', ordered, start: ordered ? Number.parseInt(first[2]!, 10) : 1, items });
  return i;
}

function nextIsSameList(lines: string[], i: number, ordered: boolean): boolean {
  const following = nextNonBlank(lines, i);
  const match = following === undefined ? null : LIST_ITEM.exec(following);
  return match !== null && /\d/.test(match[2]!) === ordered;
}

function nextNonBlank(lines: readonly string[], from: number): string | undefined {
  for (let j = from; j < lines.length; j += 1) if (lines[j]!.trim() !== '') return lines[j];
  return undefined;
}

function leadingSpaces(line: string): number {
  let n = 0;
  for (const c of line) {
    if (c === ' ') n += 1;
    else if (c === '\t') n += 4;
    else break;
  }
  return n;
}

function splitRow(line: string): string[] {
  let row = line.trim();
  if (row.startsWith('|')) row = row.slice(1);
  if (row.endsWith('|') && !row.endsWith('\\|')) row = row.slice(0, -1);
  const cells: string[] = [];
  let cell = '';
  for (let i = 0; i < row.length; i += 1) {
    const c = row[i]!;
    if (c === '\\' && row[i + 1] === '|') {
      cell += '|';
      i += 1;
    } else if (c === '|') {
      cells.push(cell.trim());
      cell = '';
    } else cell += c;
  }
  cells.push(cell.trim());
  return cells;
}

function parseTable(lines: string[], start: number): { block: Block; next: number } | undefined {
  const head = splitRow(lines[start]!);
  const align: Align[] = splitRow(lines[start + 1]!).map((spec) => {
    const left = spec.startsWith(':');
    const right = spec.endsWith(':');
    return left && right ? 'center' : right ? 'right' : left ? 'left' : null;
  });
  if (align.length !== head.length) return undefined;
  const rows: Inline[][][] = [];
  let i = start + 2;
  while (i < lines.length && lines[i]!.trim() !== '' && lines[i]!.includes('|')) {
    const cells = splitRow(lines[i]!);
    rows.push(head.map((_, c) => parseInline(cells[c] ?? '')));
    i += 1;
  }
  return { block: { type: 'table', align, head: head.map((c) => parseInline(c)), rows }, next: i };
}

// --- inlines ---

const PUNCTUATION = '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~';
const WORD = /[\p{L}\p{N}]/u;

/**
 * Parses inline markdown (emphasis, code, links) into nodes. Newlines become `break` nodes.
 *
 * @param text - one paragraph's text
 */
export function parseInline(text: string, depth = 0): Inline[] {
  if (depth >= MAX_INLINE_DEPTH) return text ? [{ type: 'text', text }] : [];
  const out: Inline[] = [];
  let buf = '';
  const flush = (): void => {
    if (buf) out.push({ type: 'text', text: buf });
    buf = '';
  };
  /** Positions from which a closer for a delimiter is known to be absent (keeps parsing linear). */
  const noCloserFrom = new Map<string, number>();
  const absent: AbsentFrom = new Map();
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text[i]!;
    if (c === '\\' && i + 1 < n && PUNCTUATION.includes(text[i + 1]!)) {
      buf += text[i + 1];
      i += 2;
    } else if (c === '\n') {
      buf = buf.replace(/[ \t]+$/, '');
      flush();
      out.push({ type: 'break' });
      i += 1;
    } else if (c === '`') {
      let k = 1;
      while (text[i + k] === '`') k += 1;
      const close = findCodeClose(text, i + k, k);
      if (close < 0) {
        buf += text.slice(i, i + k);
        i += k;
      } else {
        let code = text.slice(i + k, close).replace(/\n/g, ' ');
        if (code.length > 2 && code.startsWith(' ') && code.endsWith(' ')) code = code.slice(1, -1);
        flush();
        out.push({ type: 'code', text: code });
        i = close + k;
      }
    } else if (c === '*' || c === '_' || c === '~') {
      const double = text[i + 1] === c;
      if (c === '~' && !double) {
        buf += c;
        i += 1;
        continue;
      }
      const delim = double ? c + c : c;
      const opens =
        i + delim.length < n &&
        !/\s/.test(text[i + delim.length]!) &&
        !(c === '_' && i > 0 && WORD.test(text[i - 1]!));
      const from = i + delim.length;
      const close =
        opens && (noCloserFrom.get(delim) ?? n + 1) > from ? findDelimClose(text, from, delim) : -1;
      if (close < 0) {
        if (opens) noCloserFrom.set(delim, Math.min(noCloserFrom.get(delim) ?? n + 1, from));
        buf += delim;
        i += delim.length;
      } else {
        flush();
        const children = parseInline(text.slice(from, close), depth + 1);
        out.push({ type: delim === '~~' ? 'del' : double ? 'strong' : 'em', children });
        i = close + delim.length;
      }
    } else if (c === '[' || (c === '!' && text[i + 1] === '[')) {
      const link = parseLink(text, c === '!' ? i + 1 : i, absent);
      if (!link) {
        buf += c;
        i += 1;
        continue;
      }
      flush();
      const children =
        c === '!'
          ? [{ type: 'text' as const, text: link.label || 'image' }]
          : parseInline(link.label, depth + 1);
      const href = safeHref(link.url);
      if (href) out.push({ type: 'link', href, children });
      else out.push(...children);
      i = link.end;
    } else if (c === '<') {
      const auto = /^<(https?:\/\/[^\s<>]+)>/i.exec(text.slice(i, i + 2050));
      const href = auto ? safeHref(auto[1]!) : undefined;
      if (auto && href) {
        flush();
        out.push({ type: 'link', href, children: [{ type: 'text', text: auto[1]! }] });
        i += auto[0].length;
      } else {
        buf += c;
        i += 1;
      }
    } else if (
      c === 'h' &&
      (i === 0 || !WORD.test(text[i - 1]!)) &&
      /^https?:\/\//i.test(text.slice(i, i + 8))
    ) {
      const raw = trimUrl(/^https?:\/\/[^\s<>]+/i.exec(text.slice(i, i + 2048))![0]);
      const href = safeHref(raw);
      if (href && raw.length > 8) {
        flush();
        out.push({ type: 'link', href, children: [{ type: 'text', text: raw }] });
        i += raw.length;
      } else {
        buf += c;
        i += 1;
      }
    } else {
      buf += c;
      i += 1;
    }
  }
  flush();
  return out;
}

function findCodeClose(text: string, from: number, k: number): number {
  const run = '`'.repeat(k);
  let at = text.indexOf(run, from);
  while (at >= 0) {
    let end = at + k;
    if (text[end] !== '`') return at;
    while (text[end] === '`') end += 1;
    at = text.indexOf(run, end);
  }
  return -1;
}

function findDelimClose(text: string, from: number, delim: string): number {
  let at = text.indexOf(delim, from);
  while (at >= 0) {
    const before = text[at - 1]!;
    const after = text[at + delim.length];
    const single = delim.length === 1;
    const ok =
      at > from &&
      !/\s/.test(before) &&
      !(single && (after === delim || before === delim)) &&
      !(delim[0] === '_' && after !== undefined && WORD.test(after));
    if (ok) return at;
    at = text.indexOf(delim, at + 1);
  }
  return -1;
}

/**
 * Per-character memo of the last look-up: the text has no `ch` in `[from, at)`, so a later look-up
 * starting inside that range answers at once. Keeps repeated failed link parses linear.
 */
type AbsentFrom = Map<string, { from: number; at: number }>;

function indexAfter(text: string, ch: string, from: number, memo: AbsentFrom): number {
  const last = memo.get(ch);
  if (last && from >= last.from && (last.at < 0 || from <= last.at)) return last.at;
  const at = text.indexOf(ch, from);
  memo.set(ch, { from, at });
  return at;
}

/** `[label](url)`; labels cannot contain brackets and URLs stay on one line. */
function parseLink(
  text: string,
  open: number,
  absent: AbsentFrom,
): { label: string; url: string; end: number } | undefined {
  const close = indexAfter(text, ']', open + 1, absent);
  if (close < 0 || text[close + 1] !== '(') return undefined;
  const nested = text.indexOf('[', open + 1);
  if (nested >= 0 && nested < close) return undefined;
  const end = indexAfter(text, ')', close + 2, absent);
  if (end < 0) return undefined;
  let target = text.slice(close + 2, end);
  if (target.includes('\n')) return undefined;
  let stop = end;
  // One level of balanced parentheses inside the URL, as in Wikipedia links.
  if (target.includes('(') && !target.includes(')') && text[end + 1] !== undefined) {
    const next = text.indexOf(')', end + 1);
    if (next > 0 && !text.slice(end + 1, next).includes('\n') && !/\s/.test(text.slice(end + 1, next))) {
      target = text.slice(close + 2, next);
      stop = next;
    }
  }
  const url =
    target
      .trim()
      .replace(/^<(.*)>$/, '$1')
      .split(/\s+/)[0] ?? '';
  return { label: text.slice(open + 1, close), url, end: stop + 1 };
}

/** Drops trailing punctuation that usually ends a sentence rather than a URL (keeps balanced `)`). */
function trimUrl(url: string): string {
  let end = url.length;
  while (end > 0) {
    const ch = url[end - 1]!;
    if ('.,;:!?\'"*_~'.includes(ch)) end -= 1;
    else if (ch === ')' && count(url.slice(0, end), '(') < count(url.slice(0, end), ')')) end -= 1;
    else break;
  }
  return url.slice(0, end);
}

function count(text: string, ch: string): number {
  let n = 0;
  for (const c of text) if (c === ch) n += 1;
  return n;
}
