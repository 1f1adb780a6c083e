import { describe, expect, it } from 'vitest';
import { chunkTokens } from './chunk-tokens.js';
import { commonmark, discord, whatsapp } from './dialects/chat-dialects.js';
import { telegramHtml } from './dialects/telegram-html.js';
import { renderMessages } from './render.js';
import { checkTelegramHtml } from './testing/telegram-html-check.js';

const visible = (html: string): string => {
  const checked = checkTelegramHtml(html);
  if (!checked.ok) throw new Error(`${checked.error}\n${html}`);
  return checked.text;
};

describe('chunkTokens', () => {
  it('returns short text as one message and blank text as none', () => {
    expect(renderMessages('hello **world**', discord)).toEqual(['hello **world**']);
    expect(renderMessages('  \n\n ', discord)).toEqual([]);
    expect(renderMessages('\n\n', telegramHtml)).toEqual([]);
  });

  it('refuses a limit below 64', () => {
    expect(() => chunkTokens([], 10)).toThrow(RangeError);
  });

  it('prefers paragraph breaks, then line breaks', () => {
    const para = `${'a'.repeat(40)}\n\n${'b'.repeat(40)}`;
    expect(renderMessages(para, telegramHtml, { limit: 64 })).toEqual(['a'.repeat(40), 'b'.repeat(40)]);
    const lines = `${'a'.repeat(25)}\n${'b'.repeat(25)}\n${'c'.repeat(25)}`;
    expect(renderMessages(lines, discord, { limit: 64 })).toEqual([
      `${'a'.repeat(25)}\n${'b'.repeat(25)}`,
      'c'.repeat(25),
    ]);
  });

  it('prefers the end of a sentence to any other space', () => {
    const text = `${'word '.repeat(6)}ends here. ${'more '.repeat(12)}`;
    expect(renderMessages(text, whatsapp, { limit: 64 })[0]).toBe(`${'word '.repeat(6)}ends here.`);
  });

  it('prefers paragraph boundaries over filling every message', () => {
    const paragraph = (n: number): string =>
      `Paragraph ${n}. ${'lorem ipsum dolor sit amet '.repeat(22).trim()}`;
    const chunks = renderMessages(Array.from({ length: 9 }, (_, i) => paragraph(i)).join('\n\n'), discord);
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) expect(chunk).toMatch(/^Paragraph \d+\.[\s\S]*amet$/);
  });

  it('closes and reopens tags across a cut', () => {
    const chunks = renderMessages(`**${'word '.repeat(40).trim()}**`, telegramHtml, { limit: 64 });
    expect(chunks.length).toBeGreaterThan(2);
    for (const chunk of chunks) {
      expect(chunk).toMatch(/^<b>word( word)*<\/b>$/);
      expect(chunk.length).toBeLessThanOrEqual(64);
    }
  });

  it('closes a code block cut across messages and reopens it with its language', () => {
    const code = Array.from({ length: 200 }, (_, i) => `const value${i} = compute(${i}); // line ${i}`);
    const text = `Here is the code:\n\n\`\`\`typescript\n${code.join('\n')}\n\`\`\`\n\nThat is all.`;
    const chunks = renderMessages(text, discord);
    expect(chunks.length).toBeGreaterThan(3);
    expect(chunks[0]).toMatch(/^Here is the code:\n\n```typescript\n[\s\S]*\n```$/);
    for (const chunk of chunks.slice(1, -1)) {
      expect(chunk.length).toBeLessThanOrEqual(2000);
      expect(chunk).toMatch(/^```typescript\nconst value\d+[\s\S]*\/\/ line \d+\n```$/);
    }
    expect(chunks.at(-1)).toMatch(/That is all\.$/);
    const lines = chunks.flatMap((chunk) => chunk.split('\n')).filter((line) => line.startsWith('const'));
    expect(lines).toEqual(code);
  });

  it('splits a long code block into several pre blocks at line breaks', () => {
    const code = Array.from({ length: 40 }, (_, i) => `line ${i}`).join('\n');
    const chunks = renderMessages(`\`\`\`ts\n${code}\n\`\`\``, telegramHtml, { limit: 120 });
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks)
      expect(chunk).toMatch(/^<pre><code class="language-ts">line \d+[\s\S]*<\/code><\/pre>$/);
    expect(chunks.map(visible).join('\n')).toBe(code);
  });

  it('starts a code block in a new message rather than splitting it when there is room', () => {
    const prose = 'word '.repeat(300).trim();
    const code = `\`\`\`js\n${'console.log(1);\n'.repeat(40)}\`\`\``;
    expect(renderMessages(`${prose}\n\n${code}`, discord)).toEqual([prose, code]);
  });

  it('reopens a WhatsApp block without a language', () => {
    const code = Array.from({ length: 30 }, (_, i) => `line ${i}`).join('\n');
    const chunks = renderMessages(`Intro\n\n\`\`\`sh\n${code}\n\`\`\``, whatsapp, { limit: 120 });
    expect(chunks.length).toBeGreaterThan(2);
    for (const chunk of chunks.slice(1)) expect(chunk).toMatch(/^```\n[\s\S]*\n```$/);
  });

  it('keeps quotes quoted after a cut', () => {
    const chunks = renderMessages(`> ${'quoted words '.repeat(30)}`, commonmark, { limit: 100 });
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) expect(chunk).toMatch(/^> (quoted|words) /);
  });

  it('never cuts inside an entity, an escape or a surrogate pair', () => {
    for (const chunk of renderMessages('&😀'.repeat(60), telegramHtml, { limit: 65 })) {
      expect(chunk.length).toBeLessThanOrEqual(65);
      expect(visible(chunk)).toMatch(/^(&😀)*&?$|^(😀&)*😀?$/);
    }
    for (const chunk of renderMessages('\\*'.repeat(200), discord, { limit: 65 })) {
      expect(chunk).toMatch(/^(\\\*)+$/);
    }
  });

  it('cuts text without any break opportunity at the limit', () => {
    expect(renderMessages('x'.repeat(150), discord, { limit: 64 })).toEqual([
      'x'.repeat(64),
      'x'.repeat(64),
      'x'.repeat(22),
    ]);
  });

  it('drops a link whose address is too long to repeat in every message, keeping its text', () => {
    const url = `https://example.com/${'p'.repeat(100)}`;
    expect(renderMessages(`[label](${url})`, telegramHtml, { limit: 200 })).toEqual(['label']);
    expect(renderMessages(`[label](${url})`, telegramHtml)).toEqual([`<a href="${url}">label</a>`]);
  });

  it('splits a 10,000-character reply into valid 4096-character Telegram messages', () => {
    const paragraph = `**Point** with \`code\` & <escapes> and a [link](https://example.com/?a=1&b=2). ${'lorem ipsum '.repeat(20)}`;
    const markdown = Array.from({ length: 40 }, () => paragraph).join('\n\n');
    const chunks = renderMessages(markdown, telegramHtml);
    expect(chunks.length).toBeGreaterThanOrEqual(3);
    for (const chunk of chunks) expect(chunk.length).toBeLessThanOrEqual(4096);
    expect(chunks.map(visible).join('').replace(/\s+/g, '')).toBe(
      Array.from({ length: 40 }, () => visible(renderMessages(paragraph, telegramHtml)[0]!))
        .join('')
        .replace(/\s+/g, ''),
    );
  });
});
