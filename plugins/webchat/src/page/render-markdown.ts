import { type Block, type Inline, parseMarkdown, safeHref } from './markdown.js';

/**
 * Renders markdown into DOM nodes. Text always goes in through `textContent`/text nodes, never
 * `innerHTML`, so neither the model nor a visitor can inject markup. Links open in a new tab with
 * `rel="noopener noreferrer nofollow"` and only for http(s) URLs.
 *
 * @param source - markdown text
 * @returns a fragment to append
 */
export function renderMarkdown(source: string): DocumentFragment {
  const fragment = document.createDocumentFragment();
  for (const block of parseMarkdown(source)) fragment.append(renderBlock(block));
  return fragment;
}

function renderBlock(block: Block): Node {
  switch (block.type) {
    case 'paragraph':
      return withInlines(document.createElement('p'), block.children);
    case 'heading':
      return withInlines(document.createElement(`h${Math.min(6, Math.max(1, block.level))}`), block.children);
    case 'code': {
      const pre = document.createElement('pre');
      const code = document.createElement('code');
      if (block.lang && /^[\w+#.-]{1,24}$/.test(block.lang)) code.dataset.lang = block.lang;
      code.textContent = block.text;
      pre.append(code);
      return pre;
    }
    case 'quote': {
      const quote = document.createElement('blockquote');
      for (const child of block.children) quote.append(renderBlock(child));
      return quote;
    }
    case 'list': {
      const list = document.createElement(block.ordered ? 'ol' : 'ul');
      if (block.ordered && block.start !== 1) list.setAttribute('start', String(block.start));
      for (const item of block.items) {
        const li = document.createElement('li');
        const only = item.length === 1 ? item[0] : undefined;
        if (only?.type === 'paragraph') withInlines(li, only.children);
        else for (const child of item) li.append(renderBlock(child));
        list.append(li);
      }
      return list;
    }
    case 'rule':
      return document.createElement('hr');
    case 'table': {
      const wrap = document.createElement('div');
      wrap.className = 'table-wrap';
      const table = document.createElement('table');
      const head = table.createTHead().insertRow();
      block.head.forEach((cell, c) => {
        const th = document.createElement('th');
        align(th, block.align[c]);
        head.append(withInlines(th, cell));
      });
      const body = table.createTBody();
      for (const row of block.rows) {
        const tr = body.insertRow();
        row.forEach((cell, c) => {
          const td = tr.insertCell();
          align(td, block.align[c]);
          withInlines(td, cell);
        });
      }
      wrap.append(table);
      return wrap;
    }
  }
}

function align(cell: HTMLTableCellElement, value: 'left' | 'center' | 'right' | null | undefined): void {
  if (value) cell.dataset.align = value;
}

function withInlines<T extends HTMLElement>(parent: T, inlines: readonly Inline[]): T {
  for (const inline of inlines) parent.append(renderInline(inline));
  return parent;
}

function renderInline(inline: Inline): Node {
  switch (inline.type) {
    case 'text':
      return document.createTextNode(inline.text);
    case 'break':
      return document.createElement('br');
    case 'code': {
      const code = document.createElement('code');
      code.textContent = inline.text;
      return code;
    }
    case 'strong':
    case 'em':
    case 'del':
      return withInlines(document.createElement(inline.type), inline.children);
    case 'link': {
      const href = safeHref(inline.href);
      if (!href) return withInlines(document.createElement('span'), inline.children);
      const a = document.createElement('a');
      a.href = href;
      a.target = '_blank';
      a.rel = 'noopener noreferrer nofollow';
      return withInlines(a, inline.children);
    }
  }
}
