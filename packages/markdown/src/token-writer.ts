import type { Token } from './tokens.js';

/** Collects tokens and checks that every `open` gets its `close`. */
export class TokenWriter {
  readonly tokens: Token[] = [];
  private depth = 0;

  text(text: string): void {
    if (text !== '') this.tokens.push({ kind: 'text', text });
  }

  atom(text: string): void {
    this.tokens.push({ kind: 'text', text, atomic: true });
  }

  markup(text: string): void {
    if (text !== '') this.tokens.push({ kind: 'text', text, markup: true });
  }

  open(text: string, close: string, reopen?: string): void {
    this.tokens.push(
      reopen === undefined ? { kind: 'open', text, close } : { kind: 'open', text, close, reopen },
    );
    this.depth++;
  }

  close(): void {
    if (this.depth === 0) throw new Error('close without open');
    this.tokens.push({ kind: 'close' });
    this.depth--;
  }

  /** Wraps what `inside` writes in one element. */
  wrap(text: string, close: string, inside: () => void, reopen?: string): void {
    this.open(text, close, reopen);
    inside();
    this.close();
  }

  break(text: string, level: 2 | 3): void {
    this.tokens.push({ kind: 'break', text, level });
  }

  /** Separates blocks written by `each` with `separate`, skipping blocks that wrote nothing. */
  joinBlocks<T>(items: readonly T[], each: (item: T) => void, separate: () => void): void {
    let written = false;
    for (const item of items) {
      const mark = this.tokens.length;
      if (written) separate();
      const afterSeparator = this.tokens.length;
      each(item);
      if (this.tokens.length === afterSeparator) this.tokens.length = mark;
      else written = true;
    }
  }
}

/** Splits plain text into paragraphs (blank lines) with block breaks between them. */
export function plainTokens(text: string, write: (w: TokenWriter, text: string) => void): Token[] {
  const w = new TokenWriter();
  const paragraphs = text.replace(/\r\n?/g, '\n').split(/\n[ \t]*\n(?:[ \t]*\n)*/);
  w.joinBlocks(
    paragraphs,
    (p) => write(w, p),
    () => w.break('\n\n', 3),
  );
  return w.tokens;
}
