/** Telegram's maximum text length of one message. */
export const TELEGRAM_TEXT_LIMIT = 4096;

type Atom =
  | { kind: 'open'; name: string; text: string }
  | { kind: 'close'; name: string; text: string }
  | { kind: 'text'; text: string };

type OpenTag = Extract<Atom, { kind: 'open' }>;

/** A place to end a chunk: after atom `end - 1`, with `stack` open there. */
interface Cut {
  end: number;
  stack: readonly OpenTag[];
}

/**
 * Splits Telegram HTML into messages of at most `limit` characters.
 *
 * Chunks end at a paragraph break where one is near the limit, else at a line break, else at a
 * space, else anywhere between characters; never inside a tag, an entity (`&amp;`) or a surrogate
 * pair. Tags open at a cut are closed at the end of the chunk and reopened at the start of the
 * next, so every chunk is well-formed on its own and a long `<pre>` block becomes several.
 *
 * @param html - well-formed Telegram HTML (as made by `markdownToTelegramHtml`)
 * @param limit - the maximum length of one chunk in UTF-16 units; default 4096. Opening tags must
 *   be short next to it (the converter caps link targets at 1024 characters).
 * @returns the chunks, in order; empty when `html` has no visible text
 * @example
 * ```ts
 * for (const chunk of chunkTelegramHtml(markdownToTelegramHtml(reply))) await send(chunk);
 * ```
 */
export function chunkTelegramHtml(html: string, limit: number = TELEGRAM_TEXT_LIMIT): string[] {
  if (html.length <= limit) return hasVisibleText(html) ? [html] : [];
  const atoms = tokenize(html);
  const chunks: string[] = [];
  let pos = 0;
  let stack: readonly OpenTag[] = [];
  while (pos < atoms.length) {
    const prefix = stack.map((t) => t.text).join('');
    let length = prefix.length;
    let current = stack;
    let closing = closersLength(current);
    let paragraph: Cut | undefined;
    let line: Cut | undefined;
    let space: Cut | undefined;
    let i = pos;
    for (; i < atoms.length; i++) {
      const atom = atoms[i] as Atom;
      let next = current;
      let nextClosing = closing;
      if (atom.kind === 'open') {
        next = [...current, atom];
        nextClosing += atom.name.length + 3;
      } else if (atom.kind === 'close') {
        next = current.slice(0, -1);
        nextClosing -= atom.name.length + 3;
      }
      if (length + atom.text.length + nextClosing > limit && i > pos) break;
      length += atom.text.length;
      current = next;
      closing = nextClosing;
      if (atom.text === '\n') {
        const cut = { end: i + 1, stack: current };
        if (atoms[i - 1]?.text === '\n') paragraph = cut;
        line = cut;
      } else if (atom.text === ' ') {
        space = { end: i + 1, stack: current };
      }
    }
    if (i >= atoms.length) {
      pushChunk(chunks, prefix, atoms, pos, atoms.length, current);
      break;
    }
    const cut = chooseCut(pos, i, current, [paragraph, line, space]);
    pushChunk(chunks, prefix, atoms, pos, cut.end, cut.stack);
    pos = cut.end;
    stack = cut.stack;
    while (pos < atoms.length && atoms[pos]?.text === '\n') pos++;
  }
  return chunks;
}

/** Prefers the strongest break that keeps the chunk at least 40% full; else the latest break. */
function chooseCut(
  pos: number,
  end: number,
  stack: readonly OpenTag[],
  candidates: (Cut | undefined)[],
): Cut {
  const minimum = pos + Math.ceil((end - pos) * 0.4);
  for (const cut of candidates) if (cut && cut.end >= minimum) return cut;
  let latest: Cut | undefined;
  for (const cut of candidates) if (cut && (!latest || cut.end > latest.end)) latest = cut;
  return latest ?? { end, stack };
}

function pushChunk(
  chunks: string[],
  prefix: string,
  atoms: readonly Atom[],
  from: number,
  to: number,
  open: readonly OpenTag[],
): void {
  let body = prefix;
  for (let k = from; k < to; k++) body += (atoms[k] as Atom).text;
  for (let k = open.length - 1; k >= 0; k--) body += `</${(open[k] as OpenTag).name}>`;
  const chunk = removeEmptyElements(body);
  if (hasVisibleText(chunk)) chunks.push(chunk);
}

function closersLength(stack: readonly OpenTag[]): number {
  let n = 0;
  for (const tag of stack) n += tag.name.length + 3;
  return n;
}

const EMPTY_ELEMENT = /<([a-z][a-z0-9-]*)(?:\s[^>]*)?><\/\1>/g;

function removeEmptyElements(html: string): string {
  let previous: string;
  let current = html;
  do {
    previous = current;
    current = current.replace(EMPTY_ELEMENT, '');
  } while (current !== previous);
  return current;
}

function hasVisibleText(html: string): boolean {
  return html.replace(/<[^>]*>/g, '').trim() !== '';
}

const TOKEN = /<\/?([a-z][a-z0-9-]*)(?:\s[^>]*)?>|&(?:[a-z]+|#[0-9]+|#x[0-9a-f]+);/giy;

/** Tags, entities and single code points. */
function tokenize(html: string): Atom[] {
  const atoms: Atom[] = [];
  let i = 0;
  while (i < html.length) {
    TOKEN.lastIndex = i;
    const match = TOKEN.exec(html);
    if (match) {
      const text = match[0];
      if (text.startsWith('&')) atoms.push({ kind: 'text', text });
      else {
        const name = (match[1] ?? '').toLowerCase();
        atoms.push(text.startsWith('</') ? { kind: 'close', name, text } : { kind: 'open', name, text });
      }
      i += text.length;
      continue;
    }
    const code = html.codePointAt(i) ?? 0;
    const text = String.fromCodePoint(code);
    atoms.push({ kind: 'text', text });
    i += text.length;
  }
  return atoms;
}
