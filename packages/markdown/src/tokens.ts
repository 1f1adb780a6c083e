/**
 * The stream a dialect renders into and the chunker splits. Markup is paired (`open` … `close`),
 * so the chunker can close what is open at a cut and reopen it in the next message.
 */
export type Token =
  | {
      /** Visible text, already escaped for the dialect. Cut anywhere between code points, unless `atomic`. */
      kind: 'text';
      text: string;
      /** An escape (`&amp;`, `\*`) or another unit that must stay whole. */
      atomic?: boolean;
      /** Markup that shows no text of its own (a `> ` line prefix, a list marker). */
      markup?: boolean;
    }
  | {
      /** Opens an element: `<b>`, `**`, a code fence. */
      kind: 'open';
      text: string;
      /** What closes it: `</b>`, `**`, the closing fence. */
      close: string;
      /** What reopens it at the start of a later message; defaults to `text`. */
      reopen?: string;
    }
  | { kind: 'close' }
  | {
      /** A break between blocks or lines; a message may end here, and the break is then dropped. */
      kind: 'break';
      text: string;
      /** 3: between blocks, 2: between lines. */
      level: 2 | 3;
    };
