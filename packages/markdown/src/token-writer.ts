import type { Token } from './tokens.js';

/** Collects tokens and checks that every `open` gets its `close`. */
export class TokenWriter {
  readonly tokens: Token[] = [];
  /** The close markers of the open elements, innermost last. */
  private readonly closes: string[] = [];
  private last = '';

  /**
   * The last character written so far, markup included (`''` before any): a dialect's escape reads
   * it to keep a literal run from joining the text before it (WhatsApp's ``` and ~~~).
   */
  get lastChar(): string {
    return this.last;
  }

  text(text: string): void {
    if (text === '') return;
    this.tokens.push({ kind: 'text', text });
    this.wrote(text);
  }

  atom(text: string): void {
    this.tokens.push({ kind: 'text', text, atomic: true });
    this.wrote(text);
  }

  markup(text: string): void {
    if (text === '') return;
    this.tokens.push({ kind: 'text', text, markup: true });
    this.wrote(text);
  }

  open(text: string, close: string, reopen?: string): void {
    this.tokens.push(
      reopen === undefined ? { kind: 'open', text, close } : { kind: 'open', text, close, reopen },
    );
    this.closes.push(close);
    this.wrote(text);
  }

  close(): void {
    const close = this.closes.pop();
    if (close === undefined) throw new Error('close without open');
    this.tokens.push({ kind: 'close' });
    this.wrote(close);
  }

  /** Wraps what `inside` writes in one element. */
  wrap(text: string, close: string, inside: () => void, reopen?: string): void {
    this.open(text, close, reopen);
    inside();
    this.close();
  }

  break(text: string, level: 2 | 3): void {
    this.tokens.push({ kind: 'break', text, level });
    this.wrote(text);
  }

  private wrote(text: string): void {
    if (text !== '') this.last = text.at(-1)!;
  }

  /** Separates blocks written by `each` with `separate`, skipping blocks that wrote nothing. */
  joinBlocks<T>(items: readonly T[], each: (item: T) => void, separate: () => void): void {
    let written = false;
    for (const item of items) {
      const mark = this.tokens.length;
      const lastAtMark = this.last;
      if (written) separate();
      const afterSeparator = this.tokens.length;
      each(item);
      if (this.tokens.length === afterSeparator) {
        this.tokens.length = mark;
        this.last = lastAtMark;
      } else written = true;
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
