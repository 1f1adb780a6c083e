import { escapeAttribute, escapeHtml } from './escape-html.js';

/**
 * Converts model markdown into Telegram HTML (`parse_mode: 'HTML'`).
 *
 * Supported: `**bold**`/`__bold__`, `*italic*`/`_italic_`, `~~strike~~`, `` `code` ``, fenced code
 * blocks with a language, `[links](https://...)` (only `http`, `https`, `tg` and `mailto` hrefs
 * become links; others keep their text), `> quotes`, headings (bold), lists and tables (as text).
 * Everything else is escaped, so the output is always well-formed: every tag is closed, nested
 * as Telegram allows, and `&`, `<`, `>` in the text are entities.
 *
 * @param markdown - the model's reply
 * @returns Telegram HTML, possibly longer than one message; split it with `chunkTelegramHtml`
 * @example
 * ```ts
 * markdownToTelegramHtml('**Done** — see [the docs](https://grammy.dev) & `npm i`');
 * // '<b>Done</b> — see <a href="https://grammy.dev">the docs</a> &amp; <code>npm i</code>'
 * ```
 */
export function markdownToTelegramHtml(markdown: string): string {
  const lines = markdown.replace(/\r\n?/g, '\n').split('\n');
  const blocks: string[] = [];
  let paragraph: string[] = [];
  const flushParagraph = (): void => {
    if (paragraph.length > 0) blocks.push(renderInline(paragraph.join('\n'), false));
    paragraph = [];
  };
  let i = 0;
  while (i < lines.length) {
    const line = lines[i] ?? '';
    const fence = FENCE_OPEN.exec(line);
    if (fence) {
      flushParagraph();
      const end = findFenceEnd(lines, i + 1, fence[2] ?? '```');
      const indent = (fence[1] ?? '').length;
      const body = lines.slice(i + 1, end).map((l) => stripIndent(l, indent));
      const code = renderCodeBlock(body.join('\n'), fence[3] ?? '');
      if (code !== '') blocks.push(code);
      i = end + 1;
      continue;
    }
    if (line.trim() === '') {
      flushParagraph();
      if (blocks.length > 0 && blocks[blocks.length - 1] !== '') blocks.push('');
      i++;
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      flushParagraph();
      blocks.push(`<b>${renderInline(heading[1] ?? '', false)}</b>`);
      i++;
      continue;
    }
    if (RULE.test(line)) {
      flushParagraph();
      blocks.push('──────────');
      i++;
      continue;
    }
    if (QUOTE.test(line)) {
      flushParagraph();
      const quoted: string[] = [];
      while (i < lines.length && QUOTE.test(lines[i] ?? '')) {
        quoted.push((lines[i] ?? '').replace(QUOTE_MARKERS, ''));
        i++;
      }
      const inner = renderInline(quoted.join('\n').trim(), false);
      if (inner !== '') blocks.push(`<blockquote>${inner}</blockquote>`);
      continue;
    }
    if (TABLE_ROW.test(line) && TABLE_SEPARATOR.test(lines[i + 1] ?? '')) {
      flushParagraph();
      const rows: string[] = [];
      while (i < lines.length && TABLE_ROW.test(lines[i] ?? '')) {
        rows.push((lines[i] ?? '').trim());
        i++;
      }
      blocks.push(`<pre>${escapeHtml(rows.join('\n'))}</pre>`);
      continue;
    }
    const bullet = BULLET.exec(line);
    if (bullet) {
      flushParagraph();
      blocks.push(`${bullet[1] ?? ''}${renderTask(bullet[2] ?? '')}`);
      i++;
      continue;
    }
    const ordered = ORDERED.exec(line);
    if (ordered) {
      flushParagraph();
      blocks.push(`${ordered[1] ?? ''}${ordered[2]}. ${renderInline(ordered[3] ?? '', false)}`);
      i++;
      continue;
    }
    paragraph.push(line);
    i++;
  }
  flushParagraph();
  while (blocks.length > 0 && blocks[blocks.length - 1] === '') blocks.pop();
  return blocks.join('\n');
}

// --- blocks ---

const FENCE_OPEN = /^( {0,3})(`{3,}|~{3,})[ \t]*([^\s`]*)[^`]*$/;
const HEADING = /^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/;
const RULE = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const QUOTE = /^ {0,3}>/;
const QUOTE_MARKERS = /^(?: {0,3}> ?)+/;
const TABLE_ROW = /^ {0,3}\|/;
const TABLE_SEPARATOR = /^ {0,3}\|?[ \t]*:?-{3,}:?[ \t]*(\|[ \t]*:?-{3,}:?[ \t]*)*\|?[ \t]*$/;
const BULLET = /^([ \t]*)[-*+][ \t]+(.*)$/;
const ORDERED = /^([ \t]*)([0-9]{1,9})[.)][ \t]+(.*)$/;
const TASK = /^\[([ xX])\][ \t]+(.*)$/;

function findFenceEnd(lines: readonly string[], from: number, opener: string): number {
  const char = opener[0] === '~' ? '~' : '`';
  const close = new RegExp(`^ {0,3}\\${char}{${opener.length},}[ \\t]*$`);
  for (let j = from; j < lines.length; j++) if (close.test(lines[j] ?? '')) return j;
  return lines.length;
}

function stripIndent(line: string, indent: number): string {
  let n = 0;
  while (n < indent && line[n] === ' ') n++;
  return line.slice(n);
}

function renderCodeBlock(code: string, info: string): string {
  if (code.trim() === '') return '';
  const language = info.replace(/[^A-Za-z0-9_+#.-]/g, '').slice(0, 32);
  const body = escapeHtml(code);
  return language === ''
    ? `<pre>${body}</pre>`
    : `<pre><code class="language-${escapeAttribute(language)}">${body}</code></pre>`;
}

function renderTask(item: string): string {
  const task = TASK.exec(item);
  if (!task) return `• ${renderInline(item, false)}`;
  return `${task[1] === ' ' ? '☐' : '☑'} ${renderInline(task[2] ?? '', false)}`;
}

// --- inline ---

const ASCII_PUNCTUATION = /[!-/:-@[-`{-~]/;
/** How far an opening delimiter looks for its closer; bounds the cost of unmatched delimiters. */
const MAX_SPAN = 2000;
const MAX_HREF = 1024;

/**
 * Renders inline markdown. Inside a link (`inLink`) no link or code entity is produced, since
 * Telegram does not let links contain them.
 */
function renderInline(src: string, inLink: boolean): string {
  let out = '';
  let i = 0;
  while (i < src.length) {
    const ch = src[i] ?? '';
    if (ch === '\\' && i + 1 < src.length && ASCII_PUNCTUATION.test(src[i + 1] ?? '')) {
      out += escapeHtml(src[i + 1] ?? '');
      i += 2;
      continue;
    }
    if (ch === '`') {
      const code = matchCodeSpan(src, i);
      if (code) {
        out += inLink ? escapeHtml(code.content) : `<code>${escapeHtml(code.content)}</code>`;
        i = code.end;
      } else {
        const run = runLength(src, i);
        out += src.slice(i, i + run);
        i += run;
      }
      continue;
    }
    if (!inLink && (ch === '[' || (ch === '!' && src[i + 1] === '['))) {
      const link = matchLink(src, ch === '!' ? i + 1 : i);
      if (link) {
        out += renderLink(link.text || (ch === '!' ? 'image' : ''), link.url);
        i = link.end;
        continue;
      }
    }
    if (ch === '<') {
      const auto = AUTOLINK.exec(src.slice(i, i + MAX_HREF + 2));
      if (auto && !inLink) {
        out += renderLink('', auto[1] ?? '');
        i += auto[0].length;
        continue;
      }
    }
    if (ch === '*' || ch === '_' || ch === '~') {
      const span = matchEmphasis(src, i);
      if (span) {
        const inner = renderInline(span.inner, inLink);
        out += span.tags.map((t) => `<${t}>`).join('') + inner;
        out += [...span.tags]
          .reverse()
          .map((t) => `</${t}>`)
          .join('');
        i = span.end;
        continue;
      }
      const run = runLength(src, i);
      out += src.slice(i, i + run);
      i += run;
      continue;
    }
    out += escapeHtml(ch);
    i++;
  }
  return out;
}

function runLength(src: string, at: number): number {
  let n = 0;
  while (src[at + n] === src[at]) n++;
  return n;
}

function matchCodeSpan(src: string, at: number): { content: string; end: number } | undefined {
  const run = runLength(src, at);
  let j = at + run;
  const limit = Math.min(src.length, at + MAX_SPAN);
  while (j < limit) {
    if (src[j] === '`') {
      const closing = runLength(src, j);
      if (closing === run) {
        let content = src.slice(at + run, j).replace(/\n/g, ' ');
        if (/^ .*[^ ].* $/.test(content)) content = content.slice(1, -1);
        if (content === '') return undefined;
        return { content, end: j + run };
      }
      j += closing;
    } else {
      j++;
    }
  }
  return undefined;
}

interface EmphasisSpan {
  tags: string[];
  inner: string;
  end: number;
}

/** Finds `**x**`, `*x*`, `__x__`, `_x_`, `***x***` or `~~x~~` starting at `at`. */
function matchEmphasis(src: string, at: number): EmphasisSpan | undefined {
  const ch = src[at] ?? '';
  const run = runLength(src, at);
  if (ch === '~' && run !== 2) return undefined;
  if (run > 3) return undefined;
  const after = src[at + run] ?? '';
  if (after === '' || /\s/.test(after)) return undefined;
  if (ch === '_' && isWordChar(src[at - 1])) return undefined;
  const limit = Math.min(src.length, at + run + MAX_SPAN);
  let j = at + run;
  while (j < limit) {
    const c = src[j];
    if (c === '\\') {
      j += 2;
      continue;
    }
    if (c === '`') {
      const code = matchCodeSpan(src, j);
      j = code ? code.end : j + runLength(src, j);
      continue;
    }
    if (c === ch) {
      const closing = runLength(src, j);
      const before = src[j - 1] ?? '';
      const next = src[j + closing];
      // `***` may close `*` or `**` together with an inner opener (`**a *b***`).
      const fits = closing === run || (closing === 3 && ch !== '~');
      const closes = fits && j > at + run && !/\s/.test(before) && !(ch === '_' && isWordChar(next));
      if (closes) {
        return { tags: tagsFor(ch, run), inner: src.slice(at + run, j + closing - run), end: j + closing };
      }
      j += closing;
      continue;
    }
    j++;
  }
  return undefined;
}

function tagsFor(ch: string, run: number): string[] {
  if (ch === '~') return ['s'];
  if (run === 3) return ['b', 'i'];
  return run === 2 ? ['b'] : ['i'];
}

function isWordChar(c: string | undefined): boolean {
  return c !== undefined && /[\p{L}\p{N}]/u.test(c);
}

const AUTOLINK = /^<((?:https?|tg|mailto):[^\s<>]+)>/i;

/** Parses `[text](url "title")` with `[` at `at`. */
function matchLink(src: string, at: number): { text: string; url: string; end: number } | undefined {
  let depth = 0;
  let j = at;
  const limit = Math.min(src.length, at + MAX_SPAN);
  for (; j < limit; j++) {
    const c = src[j];
    if (c === '\\') {
      j++;
    } else if (c === '`') {
      const code = matchCodeSpan(src, j);
      if (code) j = code.end - 1;
    } else if (c === '[') {
      depth++;
    } else if (c === ']') {
      depth--;
      if (depth === 0) break;
    } else if (c === '\n' && src[j + 1] === '\n') {
      return undefined;
    }
  }
  if (depth !== 0 || src[j + 1] !== '(') return undefined;
  const text = src.slice(at + 1, j);
  let k = j + 2;
  let parens = 0;
  const start = k;
  for (; k < Math.min(src.length, start + MAX_HREF + 256); k++) {
    const c = src[k];
    if (c === '\n') return undefined;
    if (c === '(') parens++;
    else if (c === ')') {
      if (parens === 0) break;
      parens--;
    }
  }
  if (src[k] !== ')') return undefined;
  const target = src.slice(start, k).trim();
  const titled = /^(\S+)\s+(?:"[^"]*"|'[^']*')$/.exec(target);
  let url = titled ? (titled[1] ?? '') : target;
  if (url.startsWith('<') && url.endsWith('>')) url = url.slice(1, -1);
  return { text, url, end: k + 1 };
}

function renderLink(text: string, url: string): string {
  const rendered = renderInline(text, true);
  const label = rendered.trim() === '' ? escapeHtml(url) : rendered;
  const href = safeHref(url);
  if (href === undefined) return label;
  return `<a href="${escapeAttribute(href)}">${label}</a>`;
}

function hasSpaceOrControl(url: string): boolean {
  for (let k = 0; k < url.length; k++) {
    const code = url.charCodeAt(k);
    if (code <= 0x20 || code === 0x7f) return true;
  }
  return /\s/.test(url);
}

/** Only web, Telegram and mail links become entities; `javascript:` and friends stay text. */
function safeHref(url: string): string | undefined {
  if (url.length === 0 || url.length > MAX_HREF || hasSpaceOrControl(url)) return undefined;
  if (/^(?:tg|mailto):/i.test(url)) return url;
  if (!/^https?:\/\//i.test(url)) return undefined;
  try {
    const parsed = new URL(url);
    return parsed.hostname === '' ? undefined : url;
  } catch {
    return undefined;
  }
}
