import { checkTelegramHtml } from '@colloquy/testkit/telegram-fake';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { markdownToTelegramHtml } from './markdown-to-html.js';

const html = markdownToTelegramHtml;

describe('markdownToTelegramHtml', () => {
  it('converts bold, italic, strike and inline code', () => {
    expect(html('**b** __b2__ *i* _i2_ ~~s~~ `c`')).toBe(
      '<b>b</b> <b>b2</b> <i>i</i> <i>i2</i> <s>s</s> <code>c</code>',
    );
  });

  it('nests italic inside bold and handles triple emphasis', () => {
    expect(html('**bold *and italic***')).toBe('<b>bold <i>and italic</i></b>');
    expect(html('***both***')).toBe('<b><i>both</i></b>');
  });

  it('escapes &, < and > in text, code and code blocks', () => {
    expect(html('a < b && c > d')).toBe('a &lt; b &amp;&amp; c &gt; d');
    expect(html('`<div>&`')).toBe('<code>&lt;div&gt;&amp;</code>');
    expect(html('```\nif (a < b) {}\n```')).toBe('<pre>if (a &lt; b) {}</pre>');
  });

  it('keeps raw HTML from the model as visible text', () => {
    expect(html('<b>not bold</b> <script>x</script>')).toBe(
      '&lt;b&gt;not bold&lt;/b&gt; &lt;script&gt;x&lt;/script&gt;',
    );
  });

  it('renders fenced code with its language', () => {
    expect(html('```ts\nconst a = 1;\n```')).toBe('<pre><code class="language-ts">const a = 1;</code></pre>');
    expect(html('~~~python\nprint(1)\n~~~')).toBe('<pre><code class="language-python">print(1)</code></pre>');
  });

  it('treats markdown inside code as literal', () => {
    expect(html('```\n**not bold** [x](https://a.b)\n```')).toBe('<pre>**not bold** [x](https://a.b)</pre>');
    expect(html('`**x**`')).toBe('<code>**x**</code>');
  });

  it('closes an unterminated code fence at the end of the text', () => {
    expect(html('```js\nlet x\nlet y')).toBe('<pre><code class="language-js">let x\nlet y</code></pre>');
  });

  it('makes links only for http, https, tg and mailto', () => {
    expect(html('[docs](https://grammy.dev/guide?a=1&b=2)')).toBe(
      '<a href="https://grammy.dev/guide?a=1&amp;b=2">docs</a>',
    );
    expect(html('[me](tg://user?id=42) [mail](mailto:a@b.c)')).toBe(
      '<a href="tg://user?id=42">me</a> <a href="mailto:a@b.c">mail</a>',
    );
    expect(html('[click](javascript:alert(1))')).toBe('click');
    expect(html('[x](data:text/html,hi)')).toBe('x');
    expect(html('[rel](/docs/page)')).toBe('rel');
  });

  it('escapes quotes in link targets', () => {
    expect(html('[q](https://a.b/?q="x")')).toBe('<a href="https://a.b/?q=&quot;x&quot;">q</a>');
  });

  it('renders autolinks and keeps formatting inside link text but not code', () => {
    expect(html('<https://example.com/a>')).toBe('<a href="https://example.com/a">https://example.com/a</a>');
    expect(html('[**bold** `code`](https://a.b)')).toBe('<a href="https://a.b"><b>bold</b> code</a>');
  });

  it('renders headings bold, quotes as blockquote and lists as text', () => {
    expect(html('# Title\n\n> quoted *line*\n> two')).toBe(
      '<b>Title</b>\n\n<blockquote>quoted <i>line</i>\ntwo</blockquote>',
    );
    expect(html('- one\n* two\n  + nested\n1. first\n2) second')).toBe(
      '• one\n• two\n  • nested\n1. first\n2. second',
    );
    expect(html('- [ ] todo\n- [x] done')).toBe('☐ todo\n☑ done');
  });

  it('renders tables as preformatted text', () => {
    expect(html('| a | b |\n|---|---|\n| 1 | 2 |')).toBe('<pre>| a | b |\n|---|---|\n| 1 | 2 |</pre>');
  });

  it('leaves snake_case, arithmetic and lone markers alone', () => {
    expect(html('use snake_case_name and 2 * 3 * 4')).toBe('use snake_case_name and 2 * 3 * 4');
    expect(html('**unclosed and ~single~')).toBe('**unclosed and ~single~');
  });

  it('honours backslash escapes', () => {
    expect(html('\\*not italic\\* \\<tag\\>')).toBe('*not italic* &lt;tag&gt;');
  });

  it('lets emphasis span lines of one paragraph but not paragraphs', () => {
    expect(html('**a\nb**')).toBe('<b>a\nb</b>');
    expect(html('**a\n\nb**')).toBe('**a\n\nb**');
  });

  it('always produces Telegram HTML that parses (property)', () => {
    const pieces = fc.constantFrom(
      '**',
      '*',
      '_',
      '__',
      '~~',
      '`',
      '```',
      '```ts\n',
      '\n',
      '\n\n',
      '> ',
      '- ',
      '1. ',
      '# ',
      '[',
      ']',
      '(',
      ')',
      '](https://x.y/?a=1&b=2)',
      '](javascript:x)',
      '<',
      '>',
      '&',
      '"',
      '\\',
      '|',
      '|---|',
      ' ',
      'word',
      'ünïcödé',
      '😀',
    );
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 60 }), (parts) => {
        const out = html(parts.join(''));
        const checked = checkTelegramHtml(out);
        expect(checked, out).toMatchObject({ ok: true });
      }),
      { numRuns: 500 },
    );
  });
});
