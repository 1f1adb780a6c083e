import type {
  BlockContent,
  Definition,
  DefinitionContent,
  List,
  PhrasingContent,
  Root,
  RootContent,
  Table,
} from 'mdast';
import { collectDefinitions } from '../definitions.js';
import type { Dialect } from '../dialect.js';
import { cellText, layoutTable } from '../table-layout.js';
import { plainTokens, TokenWriter } from '../token-writer.js';

/** The syntax of one markdown-like chat dialect (Discord, WhatsApp, the web chat). */
export interface MarkdownSyntax {
  name: string;
  limit: number;
  strong: string;
  emphasis: string;
  strike: string;
  /** Headings up to this level keep `#` markers; deeper ones (all, at 0) become bold lines. */
  headingLevels: number;
  /** Links as `[text](url)` (`masked`), as `<url|text>` (`angle`, Slack), or as `text (url)` for apps without links. */
  links: 'masked' | 'angle' | 'text';
  /** Fenced code keeps its language tag. */
  codeLanguage: boolean;
  /** Inline code in one backtick (WhatsApp), or in as many as it takes to hold backticks. */
  codeSpan: 'single' | 'fit';
  /** Tables as GitHub tables, or laid out as text for apps without tables. */
  tables: 'gfm' | 'text';
  rule: string;
  /** Put before the `.` of `12. ` at the start of a line of text, so it does not read as a list item. */
  numberGuard: string;
  /** Writes literal text, escaping what the app would read as markup. */
  escape(w: TokenWriter, text: string): void;
  /**
   * Writes text the app must show as it is: code (spans and blocks) and messages sent `plain`.
   * Default: unchanged. Slack needs its entities even there.
   */
  verbatim?(w: TokenWriter, text: string): void;
}

/** Creates the dialect for a markdown-like syntax. */
export function markdownDialect(syntax: MarkdownSyntax): Dialect {
  return {
    name: syntax.name,
    limit: syntax.limit,
    render(tree) {
      const w = new TokenWriter();
      new MarkdownRenderer(w, syntax, collectDefinitions(tree)).root(tree);
      return w.tokens;
    },
    plain: (text) => plainTokens(text, (w, t) => writeVerbatim(syntax, w, t)),
  };
}

/**
 * Literal text for a dialect without escapes (WhatsApp, Slack mrkdwn), with a zero-width space
 * wherever backticks or tildes would run to three: inside the text, where its first character
 * extends what was written before it, and after a last backtick or tilde that markup or text
 * written next could extend. A line starting with such a run would read as a code fence.
 *
 * @param w - the writer, for the last character written
 * @param text - the literal text
 * @returns the text to write
 */
export function guardFenceRuns(w: TokenWriter, text: string): string {
  const joins = (text[0] === '`' || text[0] === '~') && w.lastChar === text[0];
  const inner = text.replace(/`{3,}|~{3,}/g, (run) => [...run].join('\u200b'));
  return `${joins ? '\u200b' : ''}${inner}${/[`~]$/.test(text) ? '\u200b' : ''}`;
}

/**
 * An escaper that backslash-escapes `\`, `*`, `` ` ``, `_` at a word edge, `~~`, `||` and the
 * characters in `also`.
 */
export function backslashEscaper(also: string): (w: TokenWriter, text: string) => void {
  const word = /[\p{L}\p{N}]/u;
  return (w, text) => {
    let run = '';
    const chars = [...text];
    chars.forEach((ch, i) => {
      const before = chars[i - 1] ?? ' ';
      const after = chars[i + 1] ?? ' ';
      const special =
        ch === '*' ||
        ch === '`' ||
        also.includes(ch) ||
        (ch === '\\' && /[!-/:-@[-`{-~ ]/.test(after)) ||
        (ch === '_' && !(word.test(before) && word.test(after))) ||
        (ch === '~' && (before === '~' || after === '~')) ||
        (ch === '|' && (before === '|' || after === '|'));
      if (!special) {
        run += ch;
        return;
      }
      w.text(run);
      run = '';
      w.atom(`\\${ch}`);
    });
    w.text(run);
  };
}

function writeVerbatim(syntax: MarkdownSyntax, w: TokenWriter, text: string): void {
  if (syntax.verbatim === undefined) w.text(text);
  else syntax.verbatim(w, text);
}

/** Only absolute web links are kept as links. */
function isWebLink(url: string): boolean {
  return /^https?:\/\/[^\s]+$/i.test(url) && url.length <= 2048;
}

type Block = RootContent | BlockContent | DefinitionContent;

class MarkdownRenderer {
  /** The line prefix of the containers open now (`> `, list indentation). */
  private prefix = '';
  /** The next inline starts a line of a paragraph. */
  private lineStart = false;

  constructor(
    private readonly w: TokenWriter,
    private readonly syntax: MarkdownSyntax,
    private readonly definitions: Map<string, Definition>,
  ) {}

  root(tree: Root): void {
    this.w.joinBlocks(
      tree.children,
      (node) => this.block(node),
      () => this.w.break('\n\n', 3),
    );
  }

  /** A new line inside the current containers. */
  private newline(): void {
    this.w.break(`\n${this.prefix}`, 2);
  }

  private blocks(nodes: readonly Block[]): void {
    this.w.joinBlocks(
      nodes,
      (node) => this.block(node),
      () => this.newline(),
    );
  }

  /** Runs `inside` in a container whose lines start with `prefix`. */
  private container(prefix: string, inside: () => void): void {
    const outer = this.prefix;
    this.prefix = outer + prefix;
    this.w.wrap('', '', inside, prefix);
    this.prefix = outer;
  }

  private block(node: Block): void {
    const { w, syntax } = this;
    switch (node.type) {
      case 'paragraph':
        this.lineStart = true;
        this.inlines(node.children, false);
        return;
      case 'heading':
        if (node.depth <= syntax.headingLevels) {
          w.markup(`${'#'.repeat(node.depth)} `);
          this.inlines(node.children, false);
        } else {
          w.wrap(syntax.strong, syntax.strong, () => this.inlines(stripStrong(node.children), false));
        }
        return;
      case 'thematicBreak':
        w.text(syntax.rule);
        return;
      case 'blockquote':
        w.markup('> ');
        this.container('> ', () => this.blocks(node.children));
        return;
      case 'list':
        this.list(node);
        return;
      case 'code':
        this.code(node.value, syntax.codeLanguage ? (node.lang ?? '') : '');
        return;
      case 'table':
        this.table(node);
        return;
      case 'html':
        syntax.escape(w, node.value);
        return;
      case 'footnoteDefinition':
        syntax.escape(w, `[^${node.label ?? node.identifier}]: `);
        this.blocks(node.children);
        return;
      default:
        return; // definitions, and content that is not a block
    }
  }

  private code(value: string, lang: string): void {
    if (value.trim() === '') return;
    const longest = Math.max(0, ...(value.match(/`+/g) ?? []).map((run) => run.length));
    const fence = '`'.repeat(Math.max(3, longest + 1));
    const language = lang.replace(/[^A-Za-z0-9_+#.-]/g, '').slice(0, 32);
    const open = `${fence}${language}\n${this.prefix}`;
    this.w.wrap(open, `\n${this.prefix}${fence}`, () => {
      value.split('\n').forEach((line, i) => {
        if (i > 0) this.newline();
        this.codeText(line);
      });
    });
  }

  private codeText(text: string): void {
    writeVerbatim(this.syntax, this.w, text);
  }

  private list(node: List): void {
    const start = node.start ?? 1;
    this.w.joinBlocks(
      node.children.map((item, i) => ({ item, i })),
      ({ item, i }) => {
        const marker = node.ordered ? `${start + i}. ` : '- ';
        const box = item.checked === true ? '☑ ' : item.checked === false ? '☐ ' : '';
        this.w.text(marker);
        this.w.text(box);
        this.container(' '.repeat(marker.length), () => this.blocks(item.children));
      },
      () => this.newline(),
    );
  }

  private table(node: Table): void {
    const { w, syntax } = this;
    if (syntax.tables === 'gfm') {
      const [head, ...body] = node.children;
      const columns = head?.children.length ?? 0;
      const row = (cells: readonly { children: PhrasingContent[] }[]): void => {
        w.markup('|');
        for (let c = 0; c < columns; c++) {
          w.text(' ');
          const cell = cells[c];
          if (cell)
            cellText(cell.children)
              .split('|')
              .forEach((part, k) => {
                if (k > 0) w.atom('\\|');
                syntax.escape(w, part);
              });
          w.markup(' |');
        }
      };
      row(head?.children ?? []);
      this.newline();
      const align = node.align ?? [];
      w.markup(
        `|${Array.from({ length: columns }, (_, c) => {
          const a = align[c];
          return a === 'center' ? ' :-: ' : a === 'right' ? ' --: ' : a === 'left' ? ' :-- ' : ' --- ';
        }).join('|')}|`,
      );
      for (const r of body) {
        this.newline();
        row(r.children);
      }
      return;
    }
    const layout = layoutTable(node);
    if (layout.kind === 'grid') {
      this.code(layout.lines.join('\n'), '');
      return;
    }
    w.joinBlocks(
      layout.rows,
      (r) => {
        w.text('- ');
        if (r.lead !== '') w.wrap(syntax.strong, syntax.strong, () => syntax.escape(w, r.lead));
        if (r.lead !== '' && r.detail !== '') w.text(' — ');
        syntax.escape(w, r.detail);
      },
      () => this.newline(),
    );
  }

  private inlines(nodes: readonly PhrasingContent[], inLink: boolean): void {
    for (const node of nodes) this.inline(node, inLink);
  }

  private inline(node: PhrasingContent, inLink: boolean): void {
    const { w, syntax } = this;
    const lineStart = this.lineStart;
    this.lineStart = false;
    switch (node.type) {
      case 'text':
        node.value.split('\n').forEach((line, i) => {
          if (i > 0) this.newline();
          syntax.escape(w, i > 0 || lineStart ? this.guardNumber(line) : line);
        });
        return;
      case 'html':
        syntax.escape(w, node.value);
        return;
      case 'strong':
        w.wrap(syntax.strong, syntax.strong, () => this.inlines(node.children, inLink));
        return;
      case 'emphasis':
        w.wrap(syntax.emphasis, syntax.emphasis, () => this.inlines(node.children, inLink));
        return;
      case 'delete':
        w.wrap(syntax.strike, syntax.strike, () => this.inlines(node.children, inLink));
        return;
      case 'inlineCode': {
        const value = node.value.replace(/\n/g, ' ');
        const longest = Math.max(0, ...(value.match(/`+/g) ?? []).map((run) => run.length));
        const ticks = '`'.repeat(syntax.codeSpan === 'single' ? 1 : longest + 1);
        const pad = ticks.length > 1 || value.startsWith('`') || value.endsWith('`') ? ' ' : '';
        w.wrap(ticks + pad, pad + ticks, () => this.codeText(value));
        return;
      }
      case 'break':
        this.newline();
        this.lineStart = true;
        return;
      case 'link':
        this.link(node.url, node.children, inLink);
        return;
      case 'image':
        this.link(node.url, node.alt ? [{ type: 'text', value: node.alt }] : [], inLink);
        return;
      case 'linkReference': {
        const url = this.definitions.get(node.identifier)?.url;
        if (url === undefined) this.inlines(node.children, inLink);
        else this.link(url, node.children, inLink);
        return;
      }
      case 'imageReference': {
        const url = this.definitions.get(node.identifier)?.url ?? '';
        this.link(url, node.alt ? [{ type: 'text', value: node.alt }] : [], inLink);
        return;
      }
      case 'footnoteReference':
        syntax.escape(w, `[^${node.label ?? node.identifier}]`);
        return;
      default:
        return;
    }
  }

  /**
   * A line of text that starts like an ordered list item (`12. `, a line a lazy paragraph holds, or
   * the first of a message cut before it) gets the guard before its `.` or `)`; returns the rest.
   */
  private guardNumber(line: string): string {
    const marker = /^(\d{1,9})([.)])(?=[ \t]|$)/.exec(line);
    if (marker === null) return line;
    this.w.text(marker[1] ?? '');
    this.w.atom(`${this.syntax.numberGuard}${marker[2]}`);
    return line.slice(marker[0].length);
  }

  private link(url: string, children: readonly PhrasingContent[], inLink: boolean): void {
    const { w, syntax } = this;
    const label = cellText([...children]);
    if (inLink) {
      this.inlines(children, true);
      return;
    }
    if (children.length === 0 || label === url || `mailto:${label}` === url) {
      w.text(label === '' ? url : label);
      return;
    }
    if (syntax.links === 'angle' && isWebLink(url)) {
      // Slack ends the target at `|` or `>`, and reads `&`, `<`, `>` as entities.
      const target = url.replace(/[|<>&]/g, (c) => encodeURIComponent(c));
      w.wrap(`<${target}|`, '>', () => this.inlines(children, true));
      return;
    }
    if (syntax.links === 'masked' && isWebLink(url)) {
      const target = url.replace(/[()]/g, (c) => (c === '(' ? '%28' : '%29'));
      w.wrap('[', `](${target})`, () => this.inlines(children, true));
      return;
    }
    this.inlines(children, true);
    if (isWebLink(url) || /^mailto:/i.test(url)) w.text(` (${url})`);
  }
}

/** Bold inside a heading that is already bold adds nothing. */
function stripStrong(nodes: readonly PhrasingContent[]): PhrasingContent[] {
  return nodes.flatMap((node) => (node.type === 'strong' ? stripStrong(node.children) : [node]));
}
