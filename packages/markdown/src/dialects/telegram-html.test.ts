import { describe, expect, it } from 'vitest';
import { renderText } from '../render.js';
import { telegramHtml } from './telegram-html.js';

const html = (markdown: string): string => renderText(markdown, telegramHtml);

describe('the Telegram HTML dialect', () => {
  it('converts bold, italic, strike and inline code', () => {
    expect(html('**b** __b2__ *i* _i2_ ~~s~~ `c`')).toBe(
      '<b>b</b> <b>b2</b> <i>i</i> <i>i2</i> <s>s</s> <code>c</code>',
    );
  });

  it('nests italic inside bold and handles triple emphasis', () => {
    expect(html('**bold *and italic***')).toBe('<b>bold <i>and italic</i></b>');
    expect(html('***both***')).toBe('<i><b>both</b></i>');
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

  it('renders fenced code with its language, markdown inside it literal', () => {
    expect(html('```ts\nconst a = 1;\n```')).toBe('<pre><code class="language-ts">const a = 1;</code></pre>');
    expect(html('~~~python\nprint(1)\n~~~')).toBe('<pre><code class="language-python">print(1)</code></pre>');
    expect(html('```\n**not bold** [x](https://a.b)\n```')).toBe('<pre>**not bold** [x](https://a.b)</pre>');
  });

  it('closes an unterminated code fence at the end of the text', () => {
    expect(html('```js\nlet x\nlet y')).toBe('<pre><code class="language-js">let x\nlet y</code></pre>');
  });

  it('makes links only for http, https, tg and mailto, with quotes escaped', () => {
    expect(html('[docs](https://grammy.dev/guide?a=1&b=2)')).toBe(
      '<a href="https://grammy.dev/guide?a=1&amp;b=2">docs</a>',
    );
    expect(html('[me](tg://user?id=42) [mail](mailto:a@b.c)')).toBe(
      '<a href="tg://user?id=42">me</a> <a href="mailto:a@b.c">mail</a>',
    );
    expect(html('[click](javascript:alert(1))')).toBe('click');
    expect(html('[rel](/docs/page)')).toBe('rel');
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
    expect(html('- one\n- two\n  - nested\n\n1. first\n2. second')).toBe(
      '• one\n• two\n  • nested\n\n1. first\n2. second',
    );
    expect(html('- [ ] todo\n- [x] done')).toBe('☐ todo\n☑ done');
  });

  it('never nests blockquotes nor puts a code block in one', () => {
    expect(html('> a\n> > b')).toBe('<blockquote>a\nb</blockquote>');
    expect(html('> run:\n> ```sh\n> npm i <pkg>\n> ```')).toBe(
      '<blockquote>run:\nnpm i &lt;pkg&gt;</blockquote>',
    );
  });

  it('renders a table as an aligned grid in pre', () => {
    expect(html('| a | b |\n|---|--:|\n| 1 | 22 |')).toBe('<pre>a |  b\n--+---\n1 | 22</pre>');
  });

  it('leaves snake_case, arithmetic, lone markers and escapes alone', () => {
    expect(html('use snake_case_name and 2 * 3 * 4')).toBe('use snake_case_name and 2 * 3 * 4');
    expect(html('**unclosed and ~single')).toBe('**unclosed and ~single');
    expect(html('\\*not italic\\* \\<tag\\>')).toBe('*not italic* &lt;tag&gt;');
  });

  it('escapes plain text without reading markdown', () => {
    expect(renderText('**a** <b>', telegramHtml, 'plain')).toBe('**a** &lt;b&gt;');
  });
});
