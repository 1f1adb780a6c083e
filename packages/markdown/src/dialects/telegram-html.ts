import type {
  BlockContent,
  Definition,
  DefinitionContent,
  List,
  PhrasingContent,
  Root,
  RootContent,
} from 'mdast';
import { collectDefinitions } from '../definitions.js';
import type { Dialect } from '../dialect.js';
import { layoutTable } from '../table-layout.js';
import { plainTokens, TokenWriter } from '../token-writer.js';

/** Telegram's longest text message. */
export const TELEGRAM_TEXT_LIMIT = 4096;

const MAX_HREF = 1024;

/**
 * Telegram HTML (`parse_mode: 'HTML'`): `<b>`, `<i>`, `<s>`, `<code>`, `<pre>` with a language,
 * `<blockquote>` and links for `http`, `https`, `tg` and `mailto` only (others keep their text).
 * Headings are bold, lists and task items are text with `•`, `1.`, `☐`/`☑`, tables an aligned grid
 * in `<pre>`. Raw HTML from the model shows as text; `&`, `<`, `>` are always entities. The output
 * nests as Telegram allows: no link or code inside a link, nothing inside code, no nested quotes
 * and no code block inside a quote (its lines show as text there).
 */
export const telegramHtml: Dialect = {
  name: 'telegram-html',
  limit: TELEGRAM_TEXT_LIMIT,
  render(tree) {
    const w = new TokenWriter();
    new TelegramRenderer(w, collectDefinitions(tree)).root(tree);
    return w.tokens;
  },
  plain: (text) => plainTokens(text, writeEscaped),
};

/**
 * Escapes text for Telegram HTML: `&`, `<` and `>` become entities.
 *
 * @param text - plain text
 * @returns the text, safe between Telegram HTML tags
 */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;'));
}

function escapeAttribute(value: string): string {
  return escapeHtml(value).replace(/"/g, '&quot;');
}

/** Text with its entities as atoms, so no message ends inside one. */
function writeEscaped(w: TokenWriter, text: string): void {
  for (const part of text.split(/([&<>])/)) {
    if (part === '&' || part === '<' || part === '>') w.atom(escapeHtml(part));
    else w.text(part);
  }
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
    return new URL(url).hostname === '' ? undefined : url;
  } catch {
    return undefined;
  }
}

type Block = RootContent | BlockContent | DefinitionContent;

class TelegramRenderer {
  private inQuote = false;

  constructor(
    private readonly w: TokenWriter,
    private readonly definitions: Map<string, Definition>,
  ) {}

  root(tree: Root): void {
    this.blocks(tree.children, 3);
  }

  private blocks(nodes: readonly Block[], level: 2 | 3, indent = ''): void {
    this.w.joinBlocks(
      nodes,
      (node) => this.block(node, indent),
      () => this.w.break(level === 3 ? '\n\n' : '\n', level),
    );
  }

  private block(node: Block, indent: string): void {
    const w = this.w;
    switch (node.type) {
      case 'paragraph':
        w.text(indent);
        this.inlines(node.children, false);
        return;
      case 'heading':
        w.text(indent);
        w.wrap('<b>', '</b>', () => this.inlines(node.children, false));
        return;
      case 'thematicBreak':
        w.text(`${indent}──────────`);
        return;
      case 'blockquote':
        if (this.inQuote) {
          this.blocks(node.children, 2, indent);
          return;
        }
        this.inQuote = true;
        w.wrap('<blockquote>', '</blockquote>', () => this.blocks(node.children, 2, indent));
        this.inQuote = false;
        return;
      case 'list':
        this.list(node, indent);
        return;
      case 'code': {
        if (node.value.trim() === '') return;
        if (this.inQuote) {
          // Telegram lets no pre block into a blockquote: the code shows as its lines.
          writeEscaped(w, node.value);
          return;
        }
        const language = (node.lang ?? '').replace(/[^A-Za-z0-9_+#.-]/g, '').slice(0, 32);
        const open = language === '' ? '<pre>' : `<pre><code class="language-${escapeAttribute(language)}">`;
        w.wrap(open, language === '' ? '</pre>' : '</code></pre>', () => writeEscaped(w, node.value));
        return;
      }
      case 'table': {
        const layout = layoutTable(node);
        if (layout.kind === 'grid') {
          if (this.inQuote) writeEscaped(w, layout.lines.join('\n'));
          else w.wrap('<pre>', '</pre>', () => writeEscaped(w, layout.lines.join('\n')));
          return;
        }
        w.joinBlocks(
          layout.rows,
          (row) => {
            w.text(`${indent}• `);
            if (row.lead !== '') w.wrap('<b>', '</b>', () => writeEscaped(w, row.lead));
            if (row.lead !== '' && row.detail !== '') w.text(' — ');
            writeEscaped(w, row.detail);
          },
          () => w.break('\n', 2),
        );
        return;
      }
      case 'html':
        w.text(indent);
        writeEscaped(w, node.value);
        return;
      case 'footnoteDefinition':
        w.text(`${indent}[${node.label ?? node.identifier}] `);
        this.blocks(node.children, 2);
        return;
      default:
        return; // definitions, and content that is not a block
    }
  }

  private list(node: List, indent: string): void {
    const start = node.start ?? 1;
    this.w.joinBlocks(
      node.children.map((item, i) => ({ item, i })),
      ({ item, i }) => {
        const marker = node.ordered
          ? `${start + i}. `
          : item.checked === true
            ? '☑ '
            : item.checked === false
              ? '☐ '
              : '• ';
        const box = node.ordered && typeof item.checked === 'boolean' ? (item.checked ? '☑ ' : '☐ ') : '';
        this.w.text(`${indent}${marker}${box}`);
        const [first, ...rest] = item.children;
        if (first?.type === 'paragraph') this.inlines(first.children, false);
        else if (first) this.block(first, '');
        if (rest.length > 0) {
          this.w.break('\n', 2);
          this.blocks(rest, 2, `${indent}  `);
        }
      },
      () => this.w.break('\n', 2),
    );
  }

  private inlines(nodes: readonly PhrasingContent[], inLink: boolean): void {
    for (const node of nodes) this.inline(node, inLink);
  }

  private inline(node: PhrasingContent, inLink: boolean): void {
    const w = this.w;
    switch (node.type) {
      case 'text':
      case 'html':
        writeEscaped(w, node.value);
        return;
      case 'strong':
        w.wrap('<b>', '</b>', () => this.inlines(node.children, inLink));
        return;
      case 'emphasis':
        w.wrap('<i>', '</i>', () => this.inlines(node.children, inLink));
        return;
      case 'delete':
        w.wrap('<s>', '</s>', () => this.inlines(node.children, inLink));
        return;
      case 'inlineCode':
        if (inLink) writeEscaped(w, node.value);
        else w.wrap('<code>', '</code>', () => writeEscaped(w, node.value));
        return;
      case 'break':
        w.text('\n');
        return;
      case 'link':
        this.link(node.url, node.children, '', inLink);
        return;
      case 'image':
        this.link(node.url, [], node.alt || 'image', inLink);
        return;
      case 'linkReference': {
        const url = this.definitions.get(node.identifier)?.url;
        if (url === undefined) this.inlines(node.children, inLink);
        else this.link(url, node.children, '', inLink);
        return;
      }
      case 'imageReference': {
        const url = this.definitions.get(node.identifier)?.url ?? '';
        this.link(url, [], node.alt || 'image', inLink);
        return;
      }
      case 'footnoteReference':
        writeEscaped(w, `[${node.label ?? node.identifier}]`);
        return;
      default:
        return;
    }
  }

  private link(url: string, children: readonly PhrasingContent[], label: string, inLink: boolean): void {
    const w = this.w;
    const href = inLink ? undefined : safeHref(url);
    const body = (): void => {
      if (label !== '') writeEscaped(w, label);
      else if (children.length === 0) writeEscaped(w, url);
      else this.inlines(children, true);
    };
    if (href === undefined) body();
    else w.wrap(`<a href="${escapeAttribute(href)}">`, '</a>', body);
  }
}
