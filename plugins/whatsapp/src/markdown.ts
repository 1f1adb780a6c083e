// Model markdown -> WhatsApp formatting: *bold*, _italic_, ~strike~, `code`, ```monospace blocks```.
// WhatsApp has no links, headings or escapes; those become plain text that reads well.

const BOLD = '\u0001';
const ITALIC = '\u0003';
const CODE = '\u0002';

const FENCE = /^( {0,3})(```+|~~~+)[^\n]*\n([\s\S]*?)(?:\n {0,3}\2[ \t]*(?=\n|$)|$(?![\s\S]))/gm;

/**
 * Converts model markdown to WhatsApp's formatting. Fenced code keeps its content verbatim as a
 * monospace block (the language tag is dropped); inline code stays in backticks.
 *
 * @param markdown - text as the model wrote it
 * @returns text for WhatsApp
 * @example
 * ```ts
 * markdownToWhatsApp('**Done** with ~~two~~ *three* [files](https://x.dev)');
 * // '*Done* with ~two~ _three_ files (https://x.dev)'
 * ```
 */
export function markdownToWhatsApp(markdown: string): string {
  const text = markdown.replace(/\r\n?/g, '\n');
  let out = '';
  let last = 0;
  for (const match of text.matchAll(FENCE)) {
    out += convertProse(text.slice(last, match.index));
    const body = (match[3] ?? '').replace(/\n$/, '');
    out += `\`\`\`\n${body}\n\`\`\``;
    last = match.index + match[0].length;
  }
  out += convertProse(text.slice(last));
  return out;
}

function convertProse(prose: string): string {
  if (prose === '') return prose;
  const codes: string[] = [];
  let text = prose.replace(
    /(`+)([^`\n]|[^`\n][\s\S]*?[^`\n])\1(?!`)/g,
    (_m, _ticks: string, body: string) => {
      codes.push(body.trim() === '' ? body : body.trim());
      return `${CODE}${codes.length - 1}${CODE}`;
    },
  );

  text = text
    .split('\n')
    .map((line) => convertBlockLine(line))
    .join('\n');
  text = convertInline(text);
  text = text.replace(/\\([\\`*_{}[\]()#+\-.!~>|])/g, '$1');

  return text
    .replace(new RegExp(`${CODE}(\\d+)${CODE}`, 'g'), (_m, i: string) => `\`${codes[Number(i)]}\``)
    .replaceAll(BOLD, '*')
    .replaceAll(ITALIC, '_');
}

function convertBlockLine(line: string): string {
  const heading = /^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/.exec(line);
  if (heading) {
    const inner = (heading[1] ?? '').replace(/\*\*|__/g, '');
    return inner === '' ? '' : `${BOLD}${inner}${BOLD}`;
  }
  if (/^ {0,3}([-*_])( {0,2}\1){2,}[ \t]*$/.test(line)) return '───';
  const bullet = /^(\s*)[*+-][ \t]+(.*)$/.exec(line);
  if (bullet) return `${bullet[1]}- ${bullet[2]}`;
  return line;
}

function convertInline(text: string): string {
  return (
    text
      // images and links: WhatsApp shows bare URLs, so keep the label and the address.
      .replace(/!\[([^\]]*)\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g, (_m, alt: string, url: string) =>
        alt ? `${alt} (${url})` : url,
      )
      .replace(/\[([^\]]+)\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g, (_m, label: string, url: string) =>
        label === url || `mailto:${label}` === url ? label : `${label} (${url})`,
      )
      .replace(/<((?:https?|mailto):[^>\s]+)>/g, '$1')
      // bold italic, bold, strike, then italic (so `**` is never read as two italics).
      .replace(/\*\*\*(?=\S)([^*\n]+?)(?<=\S)\*\*\*/g, `${BOLD}${ITALIC}$1${ITALIC}${BOLD}`)
      .replace(/\*\*(?=\S)(.+?)(?<=\S)\*\*/g, `${BOLD}$1${BOLD}`)
      .replace(/(?<![\w_])__(?=\S)(.+?)(?<=\S)__(?![\w_])/g, `${BOLD}$1${BOLD}`)
      .replace(/~~(?=\S)(.+?)(?<=\S)~~/g, '~$1~')
      .replace(/(?<![\w*\\])\*([^\s*](?:[^*\n]*?[^\s*\\])?)\*(?![\w*])/g, `${ITALIC}$1${ITALIC}`)
  );
}
