import fc from 'fast-check';
import type { Root } from 'mdast';
import { describe, expect, it } from 'vitest';
import { decodeEntities } from './from-marked.js';
import { parseMarkdown, parseTokens } from './parse.js';
import { plainParagraphs } from './plain-paragraphs.js';

/** The tree without the parts a test does not pin. */
const shape = (tree: Root): unknown => JSON.parse(JSON.stringify(tree));

describe('parseMarkdown', () => {
  it('gives the mdast node types the dialects render', () => {
    const tree = parseMarkdown(
      '# T\n\n**b** *i* ~~s~~ `c` [l](https://a.b) ![p](https://a.b/p.png)  \nx\n\n' +
        '> q\n\n1. one\n2. [x] two\n\n```ts meta\ncode\n```\n\n| a | b |\n|:-|-:|\n| 1 | 2 |\n\n---\n\n<div>h</div>',
    );
    expect(tree.children.map((node) => node.type)).toEqual([
      'heading',
      'paragraph',
      'blockquote',
      'list',
      'code',
      'table',
      'thematicBreak',
      'html',
    ]);
    const [, paragraph, , list, code, table] = tree.children;
    expect(paragraph?.type === 'paragraph' && paragraph.children.map((node) => node.type)).toEqual([
      'strong',
      'text',
      'emphasis',
      'text',
      'delete',
      'text',
      'inlineCode',
      'text',
      'link',
      'text',
      'image',
      'break',
      'text',
    ]);
    expect(list).toMatchObject({ type: 'list', ordered: true, start: 1, spread: false });
    expect(list?.type === 'list' && list.children.map((item) => item.checked)).toEqual([null, true]);
    expect(code).toMatchObject({ type: 'code', lang: 'ts', value: 'code' });
    expect(table).toMatchObject({ type: 'table', align: ['left', 'right'] });
  });

  it('decodes character references in text, link targets and alt, but not in code or autolinks', () => {
    const tree = parseMarkdown(
      'a &amp; b &lt;c&gt; &copy; &#35; &#x1F600; &bogus; & [l](https://a.b/?x=1&amp;y=2) ![&quot;q&quot;](u) `&amp;` <https://a.b/?x&amp;y>',
    );
    expect(shape(tree)).toMatchObject({
      children: [
        {
          children: [
            { type: 'text', value: 'a & b <c> © # 😀 &bogus; & ' },
            { type: 'link', url: 'https://a.b/?x=1&y=2' },
            { type: 'text', value: ' ' },
            { type: 'image', alt: '"q"' },
            { type: 'text', value: ' ' },
            { type: 'inlineCode', value: '&amp;' },
            { type: 'text', value: ' ' },
            { type: 'link', url: 'https://a.b/?x&amp;y' },
          ],
        },
      ],
    });
    expect(decodeEntities('&#0; &#xD800; &#1114112;')).toBe('\uFFFD \uFFFD \uFFFD');
  });

  it('drops the spaces around soft breaks and at the edges of a paragraph', () => {
    expect(shape(parseMarkdown('  a  \t\n   b [x](https://a.b) \n'))).toMatchObject({
      children: [{ children: [{ type: 'text', value: 'a\nb ' }, { type: 'link' }] }],
    });
  });

  it('merges text split by escapes into one node', () => {
    expect(shape(parseMarkdown('snake\\_case \\*x\\*'))).toMatchObject({
      children: [{ children: [{ type: 'text', value: 'snake_case *x*' }] }],
    });
  });

  it('keeps footnote syntax visible as text (marked has no footnotes)', () => {
    expect(shape(parseMarkdown('a[^1]\n\n[^1]: note'))).toMatchObject({
      children: [
        { type: 'paragraph', children: [{ type: 'text', value: 'a[^1]' }] },
        { type: 'paragraph', children: [{ type: 'text', value: '[^1]: note' }] },
      ],
    });
  });

  it('resolves reference links to links', () => {
    expect(shape(parseMarkdown('[docs][1]\n\n[1]: https://a.b/docs'))).toMatchObject({
      children: [{ children: [{ type: 'link', url: 'https://a.b/docs', children: [{ value: 'docs' }] }] }],
    });
  });

  it('makes CRLF and CR line endings \\n', () => {
    expect(parseMarkdown('a\r\nb\rc')).toEqual(parseMarkdown('a\nb\nc'));
  });
});

describe('the plain-text shortcut', () => {
  it('is taken for text without markdown and matches the full parse', () => {
    for (const text of ['Sure, I can do that.', 'Done!\n\nTwo paragraphs: yes (really)?', ' a \n  b\n\n\n']) {
      expect(plainParagraphs(text)).toBeDefined();
      expect(plainParagraphs(text)).toEqual(parseTokens(text));
    }
  });

  it('is not taken when the text may hold markdown', () => {
    for (const text of [
      'a *b*',
      '# h',
      '- x',
      '1. x',
      'a\n===',
      '    code',
      'a  \nb',
      'see https://a.b',
      'www.a.b',
      'a@b.c',
      'a &amp; b',
      'a\tb',
      'x | y',
      'a\n:-',
    ]) {
      expect(plainParagraphs(text)).toBeUndefined();
    }
  });

  it('gives the same tree as the full parse whenever it is taken (property)', () => {
    const unit = fc.constantFrom(
      ...'ab1 .,:;!?\'"()-+=#>/%$^{}\n'.split(''),
      '  ',
      '    ',
      '\n\n',
      ' \n',
      '1.',
      '2)',
      'é',
      '😀',
      '\u00a0',
      '\u2003',
    );
    fc.assert(
      fc.property(fc.string({ unit, maxLength: 40 }), (text) => {
        const quick = plainParagraphs(text);
        if (quick !== undefined) expect(quick).toEqual(parseTokens(text));
      }),
      { numRuns: 3000 },
    );
  });
});
