/**
 * Converts model markdown (CommonMark with GitHub tables) into Discord's markdown dialect.
 *
 * Discord renders `**bold**`, `*italic*`/`_italic_`, `__underline__`, `~~strike~~`, `` `code` ``,
 * fenced code, `> quotes`, `-`/`1.` lists, `#`..`###` headings and masked links, and nothing else.
 * So: `__bold__` becomes `**bold**` (in Discord `__` underlines), `####`+ headings and setext
 * headings become bold lines or `#` headings, tables become an aligned monospace code block (or one
 * bullet per row when too wide for one), `*`/`+` bullets become `-`, task items get a box, nested
 * quotes are flattened and rules become a line of box-drawing characters. Code (fenced and inline)
 * is never touched.
 *
 * @param markdown - the model's reply
 * @returns Discord markdown, possibly longer than one message; split it with `chunkDiscordMarkdown`
 * @example
 * ```ts
 * markdownToDiscord('#### Notes\n| a | b |\n|---|---|\n| 1 | 2 |');
 * // '**Notes**\n```\na | b\n--+--\n1 | 2\n```'
 * ```
 */
export function markdownToDiscord(markdown: string): string {
  const lines = markdown.replace(/\r\n?/g, '\n').split('\n');
  const out: string[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i] ?? '';
    const fence = FENCE_OPEN.exec(line);
    if (fence) {
      const end = findFenceEnd(lines, i + 1, fence[2] ?? '```');
      out.push(...lines.slice(i, Math.min(end + 1, lines.length)));
      i = end + 1;
      continue;
    }
    if (isTableStart(line, lines[i + 1] ?? '')) {
      const header = splitRow(line);
      const align = splitRow(lines[i + 1] ?? '').map(alignmentOf);
      const rows: string[][] = [];
      i += 2;
      while (i < lines.length && (lines[i] ?? '').includes('|') && (lines[i] ?? '').trim() !== '') {
        rows.push(splitRow(lines[i] ?? ''));
        i++;
      }
      out.push(...renderTable(header, align, rows));
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      out.push(renderHeading((heading[1] ?? '').length, heading[2] ?? ''));
      i++;
      continue;
    }
    const next = lines[i + 1] ?? '';
    if (line.trim() !== '' && !isBlockStart(line) && SETEXT.test(next)) {
      out.push(renderHeading(next.trim().startsWith('=') ? 1 : 2, line.trim()));
      i += 2;
      continue;
    }
    if (RULE.test(line)) {
      out.push('──────────');
      i++;
      continue;
    }
    const quote = QUOTE.exec(line);
    if (quote) {
      out.push(`> ${convertInline(quote[1] ?? '')}`.trimEnd());
      i++;
      continue;
    }
    const bullet = BULLET.exec(line);
    if (bullet) {
      const task = TASK.exec(bullet[2] ?? '');
      const item = task ? `${task[1] === ' ' ? '☐' : '☑'} ${task[2] ?? ''}` : (bullet[2] ?? '');
      out.push(`${bullet[1] ?? ''}- ${convertInline(item)}`);
      i++;
      continue;
    }
    out.push(convertInline(line));
    i++;
  }
  return out.join('\n');
}

// --- blocks ---

const FENCE_OPEN = /^( {0,3})(`{3,}|~{3,})([^\n]*)$/;
const HEADING = /^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/;
const SETEXT = /^ {0,3}(?:=+|-+)[ \t]*$/;
const RULE = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const QUOTE = /^ {0,3}>(?:[ \t]?>)*[ \t]?(.*)$/;
const TABLE_ROW = /^ {0,3}\|/;
const TABLE_SEPARATOR = /^ {0,3}\|?[ \t]*:?-{3,}:?[ \t]*(\|[ \t]*:?-{3,}:?[ \t]*)*\|?[ \t]*$/;
const BULLET = /^([ \t]*)[-*+][ \t]+(.*)$/;
const TASK = /^\[([ xX])\][ \t]+(.*)$/;
const ORDERED = /^[ \t]*[0-9]{1,9}[.)][ \t]+/;

/** A table wider than this (in characters) is sent as one bullet per row instead of a code block. */
const MAX_TABLE_WIDTH = 60;

function findFenceEnd(lines: readonly string[], from: number, opener: string): number {
  const char = opener[0] === '~' ? '~' : '`';
  const close = new RegExp(`^ {0,3}\\${char}{${opener.length},}[ \\t]*$`);
  for (let j = from; j < lines.length; j++) if (close.test(lines[j] ?? '')) return j;
  return lines.length;
}

/** A row with pipes followed by a delimiter row (`|---|:--:|`) starts a table. */
function isTableStart(line: string, next: string): boolean {
  return line.includes('|') && next.includes('|') && TABLE_SEPARATOR.test(next) && !FENCE_OPEN.test(line);
}

function isBlockStart(line: string): boolean {
  return (
    HEADING.test(line) ||
    RULE.test(line) ||
    QUOTE.test(line) ||
    BULLET.test(line) ||
    ORDERED.test(line) ||
    TABLE_ROW.test(line)
  );
}

/** Discord renders `#`, `##` and `###`; deeper headings become bold lines. */
function renderHeading(level: number, text: string): string {
  const inner = convertInline(text.trim());
  if (inner === '') return '';
  if (level <= 3) return `${'#'.repeat(level)} ${inner}`;
  return `**${stripEmphasis(inner)}**`;
}

// --- tables ---

type Align = 'left' | 'right' | 'center';

/** The cells of a table row: outer pipes dropped, `\|` kept as a literal pipe. */
function splitRow(line: string): string[] {
  const row = line
    .trim()
    .replace(/^\|/, '')
    .replace(/(?<!\\)\|$/, '');
  return row.split(/(?<!\\)\|/).map((cell) => cell.replace(/\\\|/g, '|').trim());
}

function alignmentOf(cell: string): Align {
  const left = cell.startsWith(':');
  const right = cell.endsWith(':');
  if (left && right) return 'center';
  return right ? 'right' : 'left';
}

function renderTable(header: string[], align: Align[], rows: string[][]): string[] {
  const columns = Math.max(header.length, ...rows.map((row) => row.length));
  const cell = (row: string[], c: number): string => plainText(row[c] ?? '');
  const head = Array.from({ length: columns }, (_, c) => cell(header, c));
  const body = rows.map((row) => Array.from({ length: columns }, (_, c) => cell(row, c)));
  const widths = head.map((h, c) => Math.max(h.length, ...body.map((row) => row[c]!.length)));
  const width = widths.reduce((sum, w) => sum + w, 0) + 3 * (columns - 1);
  if (width > MAX_TABLE_WIDTH) return renderTableAsBullets(head, body);
  const line = (cells: string[]): string =>
    cells
      .map((text, c) => pad(text, widths[c]!, align[c] ?? 'left'))
      .join(' | ')
      .trimEnd();
  const rule = widths.map((w) => '-'.repeat(w)).join('-+-');
  // The block's own fence: longer than any backtick run inside, so a cell cannot close it.
  const fence = '`'.repeat(Math.max(3, longestBacktickRun([...head, ...body.flat()]) + 1));
  return [fence, line(head), rule, ...body.map(line), fence];
}

/** One bullet per row: the first cell in bold, then `Header: value` for the others. */
function renderTableAsBullets(head: string[], body: string[][]): string[] {
  return body.map((row) => {
    const [first = '', ...rest] = row;
    const pairs = rest
      .map((value, c) => (value === '' ? '' : head[c + 1] ? `${head[c + 1]}: ${value}` : value))
      .filter((part) => part !== '');
    const lead = first === '' ? '' : `**${first}**`;
    return `- ${[lead, pairs.join(' · ')].filter((part) => part !== '').join(' — ')}`.trimEnd();
  });
}

function pad(text: string, width: number, align: Align): string {
  const gap = width - text.length;
  if (align === 'right') return ' '.repeat(gap) + text;
  if (align === 'center') return ' '.repeat(Math.floor(gap / 2)) + text + ' '.repeat(Math.ceil(gap / 2));
  return text + ' '.repeat(gap);
}

function longestBacktickRun(texts: string[]): number {
  let longest = 0;
  for (const text of texts)
    for (const run of text.match(/`+/g) ?? []) longest = Math.max(longest, run.length);
  return longest;
}

/** Cell text as it reads in a code block: no emphasis markers, links as `text (url)`, code unwrapped. */
function plainText(markdown: string): string {
  return stripEmphasis(
    markdown
      .replace(/!?\[([^\]\n]*)\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g, (_m, text: string, url: string) =>
        text === '' || text === url ? url : `${text} (${url})`,
      )
      .replace(/(`+)([^`]+?)\1/g, '$2')
      .replace(/<br\s*\/?>/gi, ' '),
  );
}

function stripEmphasis(text: string): string {
  return text
    .replace(/(\*\*\*|\*\*|__|~~)(?=\S)([^\n]*?\S)\1/g, '$2')
    .replace(/(?<![\w*])\*(?=\S)([^*\n]*?\S)\*(?![\w*])/g, '$1')
    .replace(/(?<![\w_])_(?=\S)([^_\n]*?\S)_(?![\w_])/g, '$1');
}

// --- inline ---

/**
 * Converts inline markdown outside code spans: `__bold__` (CommonMark bold, Discord underline)
 * becomes `**bold**`, `___x___` becomes `***x***`, and images become masked links.
 */
function convertInline(line: string): string {
  return splitCodeSpans(line)
    .map((part) =>
      part.code
        ? part.text
        : part.text
            .replace(/(?<![\\\w_])___(?=\S)([^_\n]*?\S)___(?![\w_])/g, '***$1***')
            .replace(/(?<![\\\w_])__(?=\S)([^_\n]*?\S)__(?![\w_])/g, '**$1**')
            .replace(/!\[([^\]\n]*)\]\(([^)\s]+)\)/g, (_m, alt: string, url: string) =>
              alt === '' ? url : `[${alt}](${url})`,
            ),
    )
    .join('');
}

function splitCodeSpans(line: string): { text: string; code: boolean }[] {
  const parts: { text: string; code: boolean }[] = [];
  let last = 0;
  for (const match of line.matchAll(/(`+)[^`]+?\1/g)) {
    if (match.index > last) parts.push({ text: line.slice(last, match.index), code: false });
    parts.push({ text: match[0], code: true });
    last = match.index + match[0].length;
  }
  if (last < line.length) parts.push({ text: line.slice(last), code: false });
  return parts;
}
