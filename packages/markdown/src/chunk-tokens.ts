import type { Token } from './tokens.js';

/** One unit the chunker never splits: a code point, an escape, a tag, a break. */
type Atom =
  | { kind: 'text'; text: string; visible: boolean; space: boolean }
  | { kind: 'open'; text: string; close: string; reopen: string }
  | { kind: 'close'; text: string }
  | { kind: 'break'; text: string; level: 2 | 3 };

type Open = Extract<Atom, { kind: 'open' }>;

/** A place to end a message: before atom `end`, with `stack` open there and `length` used. */
interface Cut {
  end: number;
  stack: readonly Open[];
  length: number;
  /** 4: between blocks, 3: between lines, 2: after a sentence, 1: at a space. */
  level: Level;
}

type Level = 1 | 2 | 3 | 4;

/** A message is kept at least this full before a weaker break is preferred to a stronger one. */
const MIN_FILL = 0.4;

/**
 * Splits a rendered token stream into messages of at most `limit` UTF-16 units.
 *
 * A message ends at a break between blocks where one leaves it at least 40% full, else between
 * lines, else after a sentence, else at a space, else between two code points; never inside an escape, a tag or a
 * surrogate pair. Elements open at a cut are closed at the end of the message and reopened at the
 * start of the next, so each message is well-formed alone and a long code block becomes several.
 * Markup too long to repeat (when what is open would take over half the limit to reopen and
 * close, like a link to a huge URL) is dropped and its text kept. Elements left without visible text are removed, and messages
 * without visible text are not sent.
 *
 * @param tokens - a dialect's rendering
 * @param limit - the most UTF-16 units in one message; at least 64
 * @returns the messages, in order
 * @throws RangeError when `limit` is not an integer of at least 64
 */
export function chunkTokens(tokens: readonly Token[], limit: number): string[] {
  if (!Number.isInteger(limit) || limit < 64)
    throw new RangeError(`limit must be an integer of at least 64, got ${limit}`);
  const atoms = toAtoms(tokens, limit);
  const chunks: string[] = [];
  let pos = skipBreaks(atoms, 0, false);
  let stack: readonly Open[] = [];
  while (pos < atoms.length) {
    let length = 0;
    for (const open of stack) length += open.reopen.length;
    let current = stack;
    let closing = closersLength(current);
    const best: (Cut | undefined)[] = [undefined, undefined, undefined, undefined, undefined];
    let i = pos;
    for (; i < atoms.length; i++) {
      const atom = atoms[i] as Atom;
      const level = breakLevel(atom, atoms[i - 1]);
      if (level !== 0 && i > pos) best[level] = { end: i, stack: current, length, level };
      let next = current;
      let nextClosing = closing;
      if (atom.kind === 'open') {
        next = [...current, atom];
        nextClosing += atom.close.length;
      } else if (atom.kind === 'close') {
        nextClosing -= (current[current.length - 1] as Open).close.length;
        next = current.slice(0, -1);
      }
      if (length + atom.text.length + nextClosing > limit && i > pos) break;
      length += atom.text.length;
      current = next;
      closing = nextClosing;
    }
    if (i >= atoms.length) {
      pushChunk(chunks, atoms, stack, pos, atoms.length);
      break;
    }
    const cut = chooseCut(best, limit);
    const end = cut?.end ?? i;
    pushChunk(chunks, atoms, stack, pos, end);
    stack = cut?.stack ?? current;
    pos = cut === undefined ? end : skipBreaks(atoms, end, cut.level <= 2);
  }
  return chunks;
}

function chooseCut(best: readonly (Cut | undefined)[], limit: number): Cut | undefined {
  for (let level = 4; level >= 1; level--) {
    const cut = best[level];
    if (cut && cut.length >= limit * MIN_FILL) return cut;
  }
  let latest: Cut | undefined;
  for (const cut of best) if (cut && (!latest || cut.end > latest.end)) latest = cut;
  return latest;
}

function breakLevel(atom: Atom, previous: Atom | undefined): Level | 0 {
  if (atom.kind === 'break') return atom.level === 3 ? 4 : 3;
  if (atom.kind !== 'text' || !atom.space) return 0;
  if (atom.text === '\n') return 3;
  return previous?.kind === 'text' && SENTENCE_END.test(previous.text) ? 2 : 1;
}

const SENTENCE_END = /^[.!?…]$/;

/** Skips the break a message ended on, and after a cut at a space the spaces that follow it. */
function skipBreaks(atoms: readonly Atom[], from: number, spaces: boolean): number {
  let pos = from;
  for (;;) {
    const atom = atoms[pos];
    if (atom === undefined) return pos;
    if (atom.kind === 'break' || (atom.kind === 'text' && atom.space && (spaces || pos === from))) pos++;
    else return pos;
  }
}

function closersLength(stack: readonly Open[]): number {
  let n = 0;
  for (const open of stack) n += open.close.length;
  return n;
}

interface Frame {
  open: Open | undefined;
  reopened: boolean;
  body: string;
  visible: boolean;
}

/** Renders atoms [from, to) after reopening `stack`; empty elements and empty messages are dropped. */
function pushChunk(
  chunks: string[],
  atoms: readonly Atom[],
  stack: readonly Open[],
  from: number,
  to: number,
): void {
  const frames: Frame[] = [{ open: undefined, reopened: false, body: '', visible: false }];
  for (const open of stack) frames.push({ open, reopened: true, body: '', visible: false });
  const top = (): Frame => frames[frames.length - 1] as Frame;
  const pop = (): void => {
    const frame = frames.pop() as Frame;
    if (!frame.visible || frame.open === undefined) return;
    const opener = frame.reopened ? frame.open.reopen : frame.open.text;
    top().body += opener + frame.body + frame.open.close;
    top().visible = true;
  };
  for (let k = from; k < to; k++) {
    const atom = atoms[k] as Atom;
    if (atom.kind === 'open') frames.push({ open: atom, reopened: false, body: '', visible: false });
    else if (atom.kind === 'close') pop();
    else {
      top().body += atom.text;
      if (atom.kind === 'text' && atom.visible) top().visible = true;
    }
  }
  while (frames.length > 1) pop();
  const root = frames[0] as Frame;
  if (root.visible) chunks.push(root.body.replace(/^\n+/, '').trimEnd());
}

const SPACE = /^\s$/;

/** Code points and escapes; markup too long to repeat in every message is dropped. */
function toAtoms(tokens: readonly Token[], limit: number): Atom[] {
  const atoms: Atom[] = [];
  /** The markup open at each point, and what reopening and closing all of it costs. */
  const kept: (string | undefined)[] = [];
  const costs: number[] = [];
  let cost = 0;
  for (const token of tokens) {
    switch (token.kind) {
      case 'text':
        if (token.atomic || token.markup) {
          const visible = !token.markup && token.text.trim() !== '';
          atoms.push({ kind: 'text', text: token.text, visible, space: false });
        } else {
          for (const ch of token.text) {
            const space = SPACE.test(ch);
            atoms.push({ kind: 'text', text: ch, visible: !space, space });
          }
        }
        break;
      case 'open': {
        const reopen = token.reopen ?? token.text;
        const own = Math.max(token.text.length, reopen.length) + token.close.length;
        const keep = cost + own <= limit / 2;
        kept.push(keep ? token.close : undefined);
        costs.push(keep ? own : 0);
        cost += keep ? own : 0;
        if (keep) atoms.push({ kind: 'open', text: token.text, close: token.close, reopen });
        break;
      }
      case 'close': {
        const close = kept.pop();
        cost -= costs.pop() ?? 0;
        if (close !== undefined) atoms.push({ kind: 'close', text: close });
        break;
      }
      case 'break':
        atoms.push({ kind: 'break', text: token.text, level: token.level });
        break;
    }
  }
  return atoms;
}
