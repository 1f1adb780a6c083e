/**
 * What {@link checkTelegramHtml} finds: the visible text, or the error Telegram would give.
 */
export type HtmlCheck = { ok: true; text: string } | { ok: false; error: string };

const ALLOWED = new Set([
  'b',
  'strong',
  'i',
  'em',
  'u',
  'ins',
  's',
  'strike',
  'del',
  'span',
  'tg-spoiler',
  'a',
  'code',
  'pre',
  'blockquote',
  'tg-emoji',
]);
const TAG = /^<(\/?)([a-z][a-z-]*)((?:\s+[a-z-]+(?:="[^"<>]*")?)*)\s*>/;
const ENTITY = /^&(lt|gt|amp|quot|#[0-9]+|#x[0-9a-fA-F]+);/;
const DECODE: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"' };

/**
 * A strict checker of Telegram HTML, as the Bot API parses `parse_mode: 'HTML'`: only the tags
 * Telegram knows, properly nested, no link inside a link, nothing inside `code`/`pre` but the
 * `<code>` of a `<pre>`, no nested blockquotes, no `<pre>` in a blockquote, and every `&`, `<`, `>` of the text escaped.
 *
 * @param html - one message
 * @returns the visible text, or the error
 */
export function checkTelegramHtml(html: string): HtmlCheck {
  const stack: string[] = [];
  let text = '';
  let i = 0;
  while (i < html.length) {
    const ch = html[i];
    if (ch === '<') {
      const m = TAG.exec(html.slice(i));
      if (!m) return fail(`Unsupported start tag at byte offset ${i}`);
      const [whole, slash, name = '', attrs = ''] = m;
      if (!ALLOWED.has(name)) return fail(`Unsupported start tag "${name}" at byte offset ${i}`);
      if (slash) {
        if (stack[stack.length - 1] !== name)
          return fail(
            `Unmatched end tag at byte offset ${i}, expected "</${stack[stack.length - 1]}>", found "</${name}>"`,
          );
        stack.pop();
      } else {
        const top = stack[stack.length - 1];
        if (top === 'code' || (top === 'pre' && name !== 'code'))
          return fail(`tag "${name}" inside "${top}"`);
        if (name === 'a' && stack.includes('a')) return fail('nested links');
        if (name === 'blockquote' && stack.includes('blockquote')) return fail('nested blockquotes');
        if (name === 'pre' && stack.includes('blockquote')) return fail('"pre" inside "blockquote"');
        if ((name === 'pre' || name === 'blockquote') && (stack.includes('code') || stack.includes('pre')))
          return fail(`"${name}" inside code`);
        if (name === 'a' && !/^\s+href="[^"]+"$/.test(attrs)) return fail('a tag without a single href');
        if (name === 'a' && !/^\s+href="(https?:\/\/|tg:|mailto:)/i.test(attrs))
          return fail('unsupported URL protocol');
        stack.push(name);
      }
      i += whole.length;
      continue;
    }
    if (ch === '&') {
      const m = ENTITY.exec(html.slice(i));
      if (!m) return fail(`Character '&' is reserved and must be escaped with "&amp;" at byte offset ${i}`);
      const name = m[1] ?? '';
      text +=
        DECODE[name] ??
        String.fromCodePoint(Number(name.startsWith('#x') ? `0x${name.slice(2)}` : name.slice(1)));
      i += m[0].length;
      continue;
    }
    if (ch === '>') return fail(`Character '>' is reserved at byte offset ${i}`);
    text += ch;
    i++;
  }
  if (stack.length > 0)
    return fail(`Can't find end tag corresponding to start tag "${stack[stack.length - 1]}"`);
  return { ok: true, text };
}

function fail(error: string): HtmlCheck {
  return { ok: false, error: `can't parse entities: ${error}` };
}
