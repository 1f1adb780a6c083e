import { describe, expect, it } from 'vitest';
import { type Block, type Inline, parseInline, parseMarkdown, safeHref } from './markdown.js';

const text = (t: string): Inline => ({ type: 'text', text: t });

/** Every link target anywhere in a tree. */
function hrefs(blocks: readonly Block[]): string[] {
  const out: string[] = [];
  const inl = (nodes: readonly Inline[]): void => {
    for (const n of nodes) {
      if (n.type === 'link') out.push(n.href);
      if ('children' in n) inl(n.children);
    }
  };
  const blk = (nodes: readonly Block[]): void => {
    for (const b of nodes) {
      if (b.type === 'paragraph' || b.type === 'heading') inl(b.children);
      if (b.type === 'quote') blk(b.children);
      if (b.type === 'list') for (const item of b.items) blk(item);
      if (b.type === 'table') for (const cell of [...b.head, ...b.rows.flat()]) inl(cell);
    }
  };
  blk(blocks);
  return out;
}

describe('inline markdown', () => {
  it('parses strong, emphasis, strike and code', () => {
    expect(parseInline('a **b** *c* ~~d~~ `e*f`')).toEqual([
      text('a '),
      { type: 'strong', children: [text('b')] },
      text(' '),
      { type: 'em', children: [text('c')] },
      text(' '),
      { type: 'del', children: [text('d')] },
      text(' '),
      { type: 'code', text: 'e*f' },
    ]);
  });

  it('leaves unmatched and intraword delimiters as text', () => {
    expect(parseInline('2 * 3 = 6 and snake_case_name')).toEqual([text('2 * 3 = 6 and snake_case_name')]);
    expect(parseInline('**open')).toEqual([text('**open')]);
  });

  it('keeps escaped punctuation literal', () => {
    expect(parseInline('\\*not em\\*')).toEqual([text('*not em*')]);
  });

  it('turns newlines into breaks', () => {
    expect(parseInline('one  \ntwo')).toEqual([text('one'), { type: 'break' }, text('two')]);
  });

  it('links http(s) URLs written as links, autolinks or bare text', () => {
    expect(parseInline('[site](https://example.com/a)')).toEqual([
      { type: 'link', href: 'https://example.com/a', children: [text('site')] },
    ]);
    expect(parseInline('see <http://x.test/p>')).toEqual([
      text('see '),
      { type: 'link', href: 'http://x.test/p', children: [text('http://x.test/p')] },
    ]);
    expect(parseInline('go to https://example.com/path.')).toEqual([
      text('go to '),
      { type: 'link', href: 'https://example.com/path', children: [text('https://example.com/path')] },
      text('.'),
    ]);
  });

  it('never links javascript:, data:, relative or protocol-relative targets', () => {
    for (const target of [
      'javascript:alert(1)',
      'JaVaScRiPt:alert(1)',
      'data:text/html,<b>x</b>',
      '/admin',
      '//evil.test',
      'vbscript:x',
    ]) {
      const nodes = parseInline(`[click](${target})`);
      expect(nodes).toEqual([text('click')]);
    }
    expect(safeHref(' javascript:alert(1)')).toBeUndefined();
    expect(safeHref('https://ok.test')).toBe('https://ok.test/');
  });

  it('keeps raw HTML as text', () => {
    expect(parseInline('<img src=x onerror=alert(1)><script>alert(2)</script>')).toEqual([
      text('<img src=x onerror=alert(1)><script>alert(2)</script>'),
    ]);
  });

  it('stays fast on pathological input', () => {
    const started = performance.now();
    parseInline('*a _b '.repeat(20_000));
    parseInline('['.repeat(50_000));
    parseInline(`${'`'.repeat(10_000)}x`);
    expect(performance.now() - started).toBeLessThan(2000);
  });
});

describe('block markdown', () => {
  it('parses headings, paragraphs, rules and fenced code', () => {
    expect(parseMarkdown('# Title\n\nSome text\nmore\n\n---\n\n```ts\nconst a = 1;\n<b>\n```')).toEqual([
      { type: 'heading', level: 1, children: [text('Title')] },
      { type: 'paragraph', children: [text('Some text'), { type: 'break' }, text('more')] },
      { type: 'rule' },
      { type: 'code', lang: 'ts', text: 'const a = 1;\n<b>' },
    ]);
  });

  it('parses nested lists and numbered lists with a start', () => {
    const [list] = parseMarkdown('- one\n  - inner\n- two');
    expect(list).toEqual({
      type: 'list',
      ordered: false,
      start: 1,
      items: [
        [
          { type: 'paragraph', children: [text('one')] },
          {
            type: 'list',
            ordered: false,
            start: 1,
            items: [[{ type: 'paragraph', children: [text('inner')] }]],
          },
        ],
        [{ type: 'paragraph', children: [text('two')] }],
      ],
    });
    expect(parseMarkdown('3. c\n4. d')[0]).toMatchObject({ type: 'list', ordered: true, start: 3 });
  });

  it('parses block quotes recursively', () => {
    expect(parseMarkdown('> quoted **bold**\n> > deeper')).toEqual([
      {
        type: 'quote',
        children: [
          { type: 'paragraph', children: [text('quoted '), { type: 'strong', children: [text('bold')] }] },
          { type: 'quote', children: [{ type: 'paragraph', children: [text('deeper')] }] },
        ],
      },
    ]);
  });

  it('parses tables with alignment', () => {
    expect(parseMarkdown('| a | b |\n|:--|--:|\n| 1 | `2` |')).toEqual([
      {
        type: 'table',
        align: ['left', 'right'],
        head: [[text('a')], [text('b')]],
        rows: [[[text('1')], [{ type: 'code', text: '2' }]]],
      },
    ]);
  });

  it('bounds nesting depth instead of recursing without end', () => {
    const blocks = parseMarkdown(`${'>'.repeat(5000)} deep`);
    expect(blocks.length).toBeGreaterThan(0);
  });

  it('collects only safe links from a hostile document', () => {
    const doc = [
      '[a](javascript:alert(1)) [b](https://ok.test)',
      '> [c](data:text/html,x)',
      '- [d](http://fine.test/x)',
      '| x |\n|---|\n| [e](javascript:void(0)) |',
    ].join('\n\n');
    expect(hrefs(parseMarkdown(doc))).toEqual(['https://ok.test/', 'http://fine.test/x']);
  });
});
